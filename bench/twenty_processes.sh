#!/bin/sh
# A shell script that runs 20 short processes (a pipeline, command substitutions, plain
# commands): the shape of a build or test script. Prints nothing.
n=0
while [ "$n" -lt 4 ]; do
  words=$(echo "a b c" | tr ' ' '\n' | sort | wc -l)
  test "$words" -eq 3 || exit 1
  /bin/true
  n=$((n + 1))
done
