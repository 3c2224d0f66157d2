#pragma once
// The scripts and styles a report page inlines, compiled into the program at build time
// (cmake/HearthEmbed.cmake): dygraphs (Debian's libjs-dygraphs) for long time series, Chart.js
// (libjs-chart.js) for bars and overlaid curves, and Hearth's own page scripts (report/js/).
// The libraries keep their license comments; their source-map references are left out, so an
// exported page never asks for anything beyond itself.

#include <string>

namespace hearth::report::scripts {

std::string dygraphs();      // dygraph.min.js (MIT)
std::string dygraphsCss();   // dygraph.min.css
std::string chartJs();       // chart.min.js (MIT)
std::string common();        // js/common.js: helpers both pages use (data, render marker, colours, tables)
std::string runPage();       // js/run_report.js
std::string comparisonPage();// js/comparison_report.js

// Versions, for the page's footer ("dygraphs 2.2.1, Chart.js 3.9.1"), read from the scripts.
std::string librariesLine();

}  // namespace hearth::report::scripts
