#include "storage/report/HtmlPage.h"

#include "storage/report/ReportScripts.h"

#include <cmath>
#include <cstdio>

namespace hearth::report::html {
namespace {

// Nothing may load from anywhere: scripts, styles and images are the page's own (inline, data:).
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "font-src data:; base-uri 'none'; form-action 'none'";

constexpr const char* kStyle = R"css(
:root{--fg:#1c2230;--muted:#5d6678;--line:#dfe3ea;--panel:#f5f6f8;--accent:#2563eb;--warn:#a15c07;--bad:#b42318;--good:#167a3e}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1040px;margin:0 auto;padding:22px 24px 40px}
h1{font-size:24px;margin:0 0 2px}
h2{font-size:17px;margin:30px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:14px 0 6px;color:var(--muted);font-weight:600}
.sub{color:var(--muted)}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:600;vertical-align:middle;margin-left:6px;background:#e8ecf3}
.badge.completed{background:#dcf5e6;color:var(--good)}.badge.failed{background:#fde4e1;color:var(--bad)}
.badge.stopped,.badge.interrupted,.badge.running{background:#fdf0d5;color:var(--warn)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:16px 0 4px}
.card{background:var(--panel);border-radius:8px;padding:9px 12px}
.card .v{font-size:19px;font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card .k{color:var(--muted);font-size:12px}
.missing{border-left:4px solid var(--warn);background:#fff8eb;padding:8px 14px;margin:14px 0;border-radius:0 6px 6px 0}
.missing ul{margin:4px 0;padding-left:20px}
.failure{border-left:4px solid var(--bad);background:#fff1ef;padding:8px 14px;margin:14px 0;white-space:pre-wrap;border-radius:0 6px 6px 0}
.grid2{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:14px 22px}
.chartbox{min-width:0}
.chart{height:250px;width:100%}
.chart.tall{height:300px}
.chart.empty{display:flex;align-items:center;justify-content:center;color:var(--muted);background:var(--panel);border-radius:6px}
.legend{font-size:12px;min-height:1.5em;color:var(--muted)}
.hint{color:var(--muted);font-size:12px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:4px 0 8px}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{font-weight:600;background:var(--panel)}
th:first-child,td:first-child{text-align:left}
table.kv th{text-align:left;background:none;color:var(--muted);font-weight:500;white-space:nowrap}
table.kv td{text-align:left;word-break:break-word}
tr.differs td{background:#fff8e1}
td.l,th.l{text-align:left}
table.settings td,table.settings th{text-align:left}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[data-sorted]::after{content:attr(data-sorted);margin-left:4px;color:var(--muted)}
.split{display:grid;grid-template-columns:auto minmax(0,1fr);gap:14px 22px;align-items:start}
table.heat{font-size:11px}
table.heat td{text-align:center;min-width:30px;padding:3px 2px;border:1px solid #fff}
table.heat th{font-weight:500;font-size:11px;white-space:nowrap;padding:3px 6px}
table.heat th.col{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left;height:auto;max-height:120px}
.samples{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:10px}
.samples.text{grid-template-columns:1fr}
.sample{background:var(--panel);border-radius:6px;padding:6px;text-align:center;font-size:12px}
.samples.text .sample{text-align:left;font-size:13px}
.sample img{width:84px;height:84px;image-rendering:pixelated;display:block;margin:2px auto 4px;background:#000}
.sample .lbl{font-weight:600}.sample .wrong{color:var(--bad)}
.sample q{display:block;white-space:pre-wrap;margin-top:3px;quotes:none;color:var(--fg)}
.runlist{max-height:300px;overflow-y:auto;font-size:12px;border:1px solid var(--line);border-radius:6px;padding:4px}
.runlist div{padding:1px 4px;cursor:default;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;border-radius:3px}
.runlist div.hl{background:#eef3ff}
.runlist .sw{display:inline-block;width:16px;height:3px;vertical-align:middle;margin-right:6px}
.controls{display:flex;gap:10px;flex-wrap:wrap;align-items:center;margin:6px 0}
.controls select,.controls input{font:inherit;padding:1px 4px}
.cmp{display:grid;grid-template-columns:minmax(0,3fr) minmax(180px,1fr);gap:14px}
footer{margin-top:36px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
details>summary{cursor:pointer;color:var(--accent)}
@page{size:A4 landscape;margin:10mm}
@media print{main{padding:0}section{break-inside:auto}.chartbox,.card,table{break-inside:avoid}h2{break-after:avoid}.controls,.hint.screen{display:none}}
)css";

}  // namespace

std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string scriptSafe(const std::string& json) {
    std::string out;
    out.reserve(json.size());
    for (size_t i = 0; i < json.size(); ++i) {
        if (json[i] == '<') {
            out += "\\u003c";   // only ever inside a JSON string
        } else if (json.compare(i, 3, "\xe2\x80\xa8") == 0 || json.compare(i, 3, "\xe2\x80\xa9") == 0) {
            out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
            i += 2;
        } else {
            out += json[i];
        }
    }
    return out;
}

std::string jsonString(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buffer;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

void NumberArray::add(double value) {
    if (m_count++ > 0) m_text += ',';
    if (!std::isfinite(value)) {
        m_text += "null";
        return;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.7g", value);
    m_text += buffer;
}

void NumberArray::addInteger(int64_t value) {
    if (m_count++ > 0) m_text += ',';
    m_text += std::to_string(value);
}

std::string documentStart(const std::string& title, PageLibraries libraries) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                      "<meta http-equiv=\"Content-Security-Policy\" content=\"" + std::string(kPolicy) + "\">\n"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                      "<meta name=\"generator\" content=\"Hearth\">\n<title>" + escape(title) + "</title>\n<style>" +
                      kStyle + "</style>\n";
    if (libraries.dygraphs) {
        out += "<style>/* dygraphs' stylesheet (MIT, https://github.com/danvk/dygraphs) */\n" + scripts::dygraphsCss() +
               "</style>\n<script>\n" + scripts::dygraphs() + "\n</script>\n";
    }
    if (libraries.chart_js) out += "<script>\n" + scripts::chartJs() + "\n</script>\n";
    return out + "</head>\n<body data-render=\"pending\">\n<main>\n";
}

std::string documentEnd(const std::string& data_json, const std::string& page_script, const std::string& footer) {
    return "<footer>" + footer + "</footer>\n</main>\n<script type=\"application/json\" id=\"hearth-data\">" +
           scriptSafe(data_json) + "</script>\n<script>\n" + scripts::common() + "\n</script>\n<script>\n" +
           page_script + "\n</script>\n</body>\n</html>\n";
}

std::string render(const Table& table) {
    std::string out = "<table" + (table.id.empty() ? std::string() : " id=\"" + table.id + "\"") +
                      (table.css_class.empty() ? std::string() : " class=\"" + table.css_class + "\"") + ">\n";
    if (!table.headers.empty()) {
        out += "<thead><tr>";
        for (const auto& h : table.headers) out += "<th>" + h + "</th>";
        out += "</tr></thead>\n";
    }
    out += "<tbody>\n";
    const bool key_value = table.headers.empty();
    for (size_t r = 0; r < table.rows.size(); ++r) {
        const bool has_class = r < table.row_classes.size() && !table.row_classes[r].empty();
        out += has_class ? "<tr class=\"" + table.row_classes[r] + "\">" : std::string("<tr>");
        for (size_t c = 0; c < table.rows[r].size(); ++c) {
            const bool header_cell = key_value && c == 0;
            const std::string* sort = r < table.sort_values.size() && c < table.sort_values[r].size() &&
                                              !table.sort_values[r][c].empty()
                                          ? &table.sort_values[r][c]
                                          : nullptr;
            if (header_cell) out += "<th>" + table.rows[r][c] + "</th>";
            else out += (sort ? "<td data-sort=\"" + *sort + "\">" : std::string("<td>")) + table.rows[r][c] + "</td>";
        }
        out += "</tr>\n";
    }
    return out + "</tbody></table>\n";
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
    return "<section id=\"" + id + "\">\n<h2>" + escape(title) + "</h2>\n" + body + "</section>\n";
}

std::string missingNotice(const std::vector<std::string>& lines) {
    if (lines.empty()) return {};
    std::string out = "<div class=\"missing\" id=\"missing\"><strong>Not in this report</strong><ul>\n";
    for (const auto& line : lines) out += "<li>" + escape(line) + "</li>\n";
    return out + "</ul></div>\n";
}

std::string cards(const std::vector<std::pair<std::string, std::string>>& figures) {
    std::string out = "<div class=\"cards\">\n";
    for (const auto& [label, value] : figures)
        out += "<div class=\"card\"><div class=\"v\" title=\"" + escape(value) + "\">" + escape(value) +
               "</div><div class=\"k\">" + escape(label) + "</div></div>\n";
    return out + "</div>\n";
}

}  // namespace hearth::report::html
