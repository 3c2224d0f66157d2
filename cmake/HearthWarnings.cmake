# hearth_set_warnings(target): the project's warning flags, applied per target.
function(hearth_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  endif()
  # A unity build includes each source into a generated one, and GCC then takes a class defined in
  # that source as a header's class whose members use an anonymous namespace (-Wsubobject-linkage).
  # It is not in one; a plain build still checks this.
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()
