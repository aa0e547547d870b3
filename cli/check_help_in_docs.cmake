# Fails when docs/cli.md does not contain the current --help text of `memtrack run`,
# `memtrack report`, `memtrack top`, `memtrack snapshot`, `memtrack attach`, `memtrack detach`,
# `memtrack diff`, `memtrack ui` and `memtrack link-flags` verbatim: the options are declared
# once, and the docs must follow.
foreach(command run report top snapshot attach detach diff ui link-flags)
  execute_process(COMMAND ${MEMTRACK} ${command} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "memtrack ${command} --help failed (${rc})")
  endif()
  file(READ ${DOC} doc)
  string(FIND "${doc}" "${help}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "docs/cli.md does not contain the current 'memtrack ${command} --help' "
                        "output; paste it there")
  endif()
endforeach()
