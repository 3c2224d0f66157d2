#pragma once
// PDF reports through a headless Chromium: the HTML page is printed as the browser draws it,
// charts included (Qt's own printing cannot run the page's scripts). Used by hearth-cli and the
// workbench alike. No Qt.

#include <optional>
#include <string>

namespace hearth::report {

// The browser to print with: $HEARTH_BROWSER when set (a path or a name on PATH), else the first
// of chromium, chromium-browser, google-chrome, google-chrome-stable found on PATH.
std::optional<std::string> findBrowser();

// What to do when there is none (names the packages and $HEARTH_BROWSER).
std::string noBrowserMessage();

// Prints `html_path` to `pdf_path` with `browser` in headless mode: no network (a dead proxy),
// a throwaway profile, no header or footer. Throws ExportError (storage/tensorboard's) naming the
// browser and its last output lines when it fails or makes no file.
void printToPdf(const std::string& browser, const std::string& html_path, const std::string& pdf_path);

// Writes `html` to a temporary file beside nothing of the user's, prints it to `pdf_path` with
// the browser found, and removes the temporary file. Throws ExportError (also when there is no
// browser: noBrowserMessage()).
void writePdf(const std::string& html, const std::string& pdf_path);

}  // namespace hearth::report
