#pragma once
// The frame every report page shares: one self-contained HTML document (a Content-Security-Policy
// that allows nothing but the page's own inline scripts, styles and data: images), the styles,
// the chart libraries a page needs, its data as inline JSON, and small builders for its tables.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hearth::report::html {

std::string escape(const std::string& text);

// JSON for a <script type="application/json"> block: "</" and U+2028/2029 escaped, so that no
// text inside (a run name, a note) can end the block.
std::string scriptSafe(const std::string& json);

// A JSON string literal.
std::string jsonString(const std::string& text);

// Numbers as a compact JSON array: 7 significant digits, null for NaN and infinities.
class NumberArray {
public:
    void reserve(size_t n) { m_text.reserve(n * 10 + 2); }
    void add(double value);
    void addInteger(int64_t value);
    std::string json() const { return "[" + m_text + "]"; }
    size_t size() const { return m_count; }

private:
    std::string m_text;
    size_t m_count = 0;
};

struct PageLibraries {
    bool dygraphs = false;
    bool chart_js = false;
};

// <!DOCTYPE html> ... <body><main>: title, policy, styles, libraries.
std::string documentStart(const std::string& title, PageLibraries libraries);
// The data block, the shared and the page's script, the footer, and the closing tags.
std::string documentEnd(const std::string& data_json, const std::string& page_script, const std::string& footer);

// A table: `headers` (may be empty), rows of cells already escaped or built as HTML.
struct Table {
    Table(std::vector<std::string> headers_, std::string css_class_, std::string id_ = {})
        : headers(std::move(headers_)), css_class(std::move(css_class_)), id(std::move(id_)) {}
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
    std::string css_class;                 // e.g. "kv", "num sortable"
    std::vector<std::string> row_classes;  // optional, one per row
    std::string id;                        // optional
    // Optional, parallel to rows: what a sortable table sorts a cell by (data-sort; "" = its text).
    std::vector<std::vector<std::string>> sort_values;
};
std::string render(const Table& table);

// <section id="..."><h2>title</h2> body </section>
std::string section(const std::string& id, const std::string& title, const std::string& body);
// A notice box listing what the page lacks and why; empty when `lines` is.
std::string missingNotice(const std::vector<std::string>& lines);
// Key figures as cards: pairs of (label, value).
std::string cards(const std::vector<std::pair<std::string, std::string>>& figures);

}  // namespace hearth::report::html
