#pragma once
// Text encodings of user files: UTF-8 validation and the Windows-1252 fallback that spreadsheet
// exports on Windows commonly need (a "café" label saved as the single byte 0xE9).

#include <string>

namespace hearth {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool isValidUtf8(const std::string& text);

// `text` decoded as Windows-1252 (WHATWG's mapping: 0x80-0x9F as in Windows, bytes it leaves
// undefined as the C1 controls), encoded as UTF-8.
std::string windows1252ToUtf8(const std::string& text);

}  // namespace hearth
