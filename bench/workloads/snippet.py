"""Real-program workload for bench/compare.py: ordinary Python object churn (strings, lists,
dicts, a Counter, sorting, a small class), run by the system's python3 with
PYTHONMALLOC=malloc so every object allocation reaches malloc, where all the tools see it.
Deterministic; prints a short summary so the work cannot be skipped."""

import collections


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


def main(scale=1.0):
    words = [f"w{i % 5003}-{i % 7}" for i in range(int(200000 * scale))]
    counts = collections.Counter(words)
    index = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    table = [[row * column for column in range(50)] for row in range(int(2000 * scale))]
    points = [Point(i, i * 2) for i in range(int(100000 * scale))]
    merged = {**{k: len(v) for k, v in index.items()}, **{str(i): i for i in range(20000)}}
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:3]
    text = " ".join(words[:50000]).upper().split()
    print(len(index), sum(map(len, index.values())), len(merged), top, len(text))
    print(sum(sum(row) for row in table), sum(p.y - p.x for p in points), sorted(merged)[:3])


if __name__ == "__main__":
    import sys

    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
