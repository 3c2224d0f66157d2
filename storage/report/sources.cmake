# storage/report: readable renderings of stored runs: terminal text, Markdown, CSV and JSON
# (RunReport.h, for hearth-cli and the workbench), and the self-contained HTML reports (a run's,
# a comparison's) with what they need.
# The chart libraries come from Debian's libjs-dygraphs and libjs-chart.js and are compiled into
# the program, so an exported page and hearth-cli need no JavaScript files at run time.
include(HearthEmbed)
find_package(ZLIB REQUIRED)   # PNG images of the misclassified samples
target_sources(hearth_storage PRIVATE
  report/TextTable.cpp
  report/RunFormat.cpp
  report/RunProfileText.cpp
  report/RunExport.cpp
  report/HtmlPage.cpp
  report/PngImage.cpp
  report/ReportScripts.cpp
  report/RunComparison.cpp
  report/RunPage.cpp
  report/RunPageHtml.cpp
  report/ComparisonPage.cpp
  report/ComparisonPageHtml.cpp
  report/LadderSummary.cpp
  report/BrowserPrint.cpp)
target_link_libraries(hearth_storage PRIVATE ZLIB::ZLIB)

hearth_find_script(HEARTH_DYGRAPHS_JS "dygraphs (dygraph.min.js)" libjs-dygraphs
  /usr/share/javascript/dygraphs/dygraph.min.js)
hearth_find_script(HEARTH_DYGRAPHS_CSS "dygraphs' stylesheet (dygraph.min.css)" libjs-dygraphs
  /usr/share/javascript/dygraphs/dygraph.min.css)
hearth_find_script(HEARTH_CHARTJS_JS "Chart.js (chart.min.js)" libjs-chart.js
  /usr/share/javascript/chart.js/chart.min.js /usr/share/nodejs/chart.js/dist/chart.min.js)
hearth_embed_file(hearth_storage kDygraphsJs "${HEARTH_DYGRAPHS_JS}")
hearth_embed_file(hearth_storage kDygraphsCss "${HEARTH_DYGRAPHS_CSS}")
hearth_embed_file(hearth_storage kChartJs "${HEARTH_CHARTJS_JS}")
hearth_embed_file(hearth_storage kReportCommonJs "${CMAKE_CURRENT_SOURCE_DIR}/report/js/common.js")
hearth_embed_file(hearth_storage kRunReportJs "${CMAKE_CURRENT_SOURCE_DIR}/report/js/run_report.js")
hearth_embed_file(hearth_storage kComparisonReportJs "${CMAKE_CURRENT_SOURCE_DIR}/report/js/comparison_report.js")
