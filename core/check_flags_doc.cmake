# Fails when docs/flags.md differs from what memtrack_flags_doc generates.
execute_process(COMMAND ${GENERATOR} OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memtrack_flags_doc failed (${rc})")
endif()
file(READ ${EXPECTED} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/flags.md is out of date; regenerate it with:\n"
                      "  build/release/core/memtrack_flags_doc > docs/flags.md")
endif()
