#include "storage/report/ReportScripts.h"

#include <cstddef>
#include <regex>

namespace hearth::embedded {
// Defined by the sources cmake/EmbedFile.cmake generates.
extern const unsigned char kDygraphsJs[];
extern const std::size_t kDygraphsJsSize;
extern const unsigned char kDygraphsCss[];
extern const std::size_t kDygraphsCssSize;
extern const unsigned char kChartJs[];
extern const std::size_t kChartJsSize;
extern const unsigned char kReportCommonJs[];
extern const std::size_t kReportCommonJsSize;
extern const unsigned char kRunReportJs[];
extern const std::size_t kRunReportJsSize;
extern const unsigned char kComparisonReportJs[];
extern const std::size_t kComparisonReportJsSize;
}  // namespace hearth::embedded

namespace hearth::report::scripts {
namespace {

// The bytes, without a trailing "//# sourceMappingURL=..." line (a browser's developer tools
// would fetch the map; the page must not refer to files it does not hold).
std::string text(const unsigned char* bytes, std::size_t size) {
    std::string s(reinterpret_cast<const char*>(bytes), size);
    for (const char* marker : {"//# sourceMappingURL=", "/*# sourceMappingURL="}) {
        const auto at = s.rfind(marker);
        if (at == std::string::npos) continue;
        const auto end = s.find('\n', at);
        s.erase(at, end == std::string::npos ? std::string::npos : end - at);
    }
    return s;
}

std::string versionIn(const std::string& script, const std::string& pattern) {
    std::smatch m;
    const std::string head = script.substr(0, 400);
    return std::regex_search(head, m, std::regex(pattern)) ? m[1].str() : std::string("?");
}

}  // namespace

std::string dygraphs() { return text(embedded::kDygraphsJs, embedded::kDygraphsJsSize); }
std::string dygraphsCss() { return text(embedded::kDygraphsCss, embedded::kDygraphsCssSize); }
std::string chartJs() { return text(embedded::kChartJs, embedded::kChartJsSize); }
std::string common() { return text(embedded::kReportCommonJs, embedded::kReportCommonJsSize); }
std::string runPage() { return text(embedded::kRunReportJs, embedded::kRunReportJsSize); }
std::string comparisonPage() { return text(embedded::kComparisonReportJs, embedded::kComparisonReportJsSize); }

std::string librariesLine() {
    static const std::string line = "dygraphs " + versionIn(dygraphs(), R"(dygraphs/blob/v([0-9.]+))") +
                                    ", Chart.js " + versionIn(chartJs(), R"(Chart\.js v([0-9.]+))") + " (MIT)";
    return line;
}

}  // namespace hearth::report::scripts
