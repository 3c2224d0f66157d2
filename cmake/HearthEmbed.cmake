# hearth_embed_file(<target> <symbol> <file>): compiles <file>'s bytes into <target> as
# hearth::embedded::<symbol> (and <symbol>Size), regenerated whenever the file changes.
function(hearth_embed_file target symbol file)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.cpp")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -DINPUT=${file} -DOUTPUT=${out} -DSYMBOL=${symbol}
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake"
    DEPENDS "${file}" "${PROJECT_SOURCE_DIR}/cmake/EmbedFile.cmake"
    COMMENT "Embedding ${file}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()

# hearth_find_script(<var> <description> <package> <candidates...>): the first existing file of
# the candidates (or the cache variable <var> when set), else a configure error naming the package.
function(hearth_find_script var description package)
  if("${${var}}" STREQUAL "" OR NOT EXISTS "${${var}}")
    foreach(candidate IN LISTS ARGN)
      if(EXISTS "${candidate}")
        set(${var} "${candidate}" CACHE FILEPATH "${description}" FORCE)
        break()
      endif()
    endforeach()
  endif()
  if("${${var}}" STREQUAL "" OR NOT EXISTS "${${var}}")
    message(FATAL_ERROR "${description} not found (tried: ${ARGN}). Install Debian's ${package} "
      "(scripts/install-deps does), or give its path with -D${var}=FILE.")
  endif()
endfunction()
