# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<name> -P EmbedFile.cmake
# Writes a C++ source that defines `const unsigned char hearth::embedded::<SYMBOL>[]` (the file's
# bytes and a terminating 0) and `const std::size_t <SYMBOL>Size` (the bytes without the 0).
# Bytes rather than a string literal: no delimiter to escape, no length limit (-Woverlength-strings).
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedFile.cmake at build time; do not edit.\n"
  "#include <cstddef>\n"
  "namespace hearth::embedded {\n"
  "extern const unsigned char ${SYMBOL}[];\n"
  "extern const std::size_t ${SYMBOL}Size;\n"
  "const unsigned char ${SYMBOL}[] = {${bytes}0x00};\n"
  "const std::size_t ${SYMBOL}Size = sizeof(${SYMBOL}) - 1;\n"
  "}  // namespace hearth::embedded\n")
# Only a changed file is replaced, so that an unchanged script does not recompile its unit.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
