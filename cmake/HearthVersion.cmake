# Hearth's version and the git revision it was built from, recorded with every run.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE HEARTH_GIT_REVISION
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT HEARTH_GIT_REVISION)
  set(HEARTH_GIT_REVISION "unknown")
endif()
