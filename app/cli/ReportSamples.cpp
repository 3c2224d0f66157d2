#include "ReportSamples.h"

#include "engine/config/ExperimentConfig.h"
#include "engine/data/WordNetGlosses.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/data/formats/IdxFile.h"
#include "engine/data/images/ImageFolderScan.h"
#include "engine/text/TextCsv.h"
#include "storage/report/RunPage.h"

#include <filesystem>

namespace hearth::cli {
namespace {

namespace fs = std::filesystem;

// The split's source file: indices of test samples count rows of the test file (IDX: t10k-*), of
// validation samples the file validation was split from.
std::string sourceFile(const DataConfig& data, bool test) {
    if (test && data.test_path) return *data.test_path;
    if (!test && data.val_path) return *data.val_path;
    return data.path;
}

std::string idxImages(const std::string& folder, bool test) {
    const std::string name = std::string(test ? "t10k" : "train") + "-images-idx3-ubyte";
    for (const std::string& candidate : {name, name + ".gz"}) {
        const fs::path p = fs::path(folder) / candidate;
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return (fs::path(folder) / (name + ".gz")).string();   // readIdxFile names it in its error
}

void addImages(report::RunPage& page, const DataConfig& data, bool test) {
    const IdxFile file = readIdxFile(idxImages(data.path, test), 3);
    const int64_t count = file.dims.at(0), rows = file.dims.at(1), columns = file.dims.at(2);
    const auto pixels = static_cast<size_t>(rows * columns);
    int64_t outside = 0;
    for (auto& sample : page.samples) {
        const int64_t i = sample.prediction.index;
        if (i < 0 || i >= count) {
            ++outside;
            continue;
        }
        const uint8_t* first = file.payload() + static_cast<size_t>(i) * pixels;
        sample.image = report::GrayImage{static_cast<int>(columns), static_cast<int>(rows), {first, first + pixels}};
    }
    if (outside > 0)
        page.samples_note = std::to_string(outside) + " sample(s) lie beyond the " + std::to_string(count) +
                            " images of the data file now there: it is not the file the run used.";
}

void addTexts(report::RunPage& page, const std::vector<std::string>& texts, const std::string& path) {
    int64_t outside = 0;
    for (auto& sample : page.samples) {
        const int64_t i = sample.prediction.index;
        if (i >= 0 && i < static_cast<int64_t>(texts.size())) sample.text = texts[static_cast<size_t>(i)];
        else ++outside;
    }
    if (outside > 0)
        page.samples_note = std::to_string(outside) + " sample(s) lie beyond the " + std::to_string(texts.size()) +
                            " rows of " + path + " now: it is not the file the run used.";
}

std::vector<std::string> csvRows(const std::string& path) {
    const CsvTable table = readCsvFile(path);
    std::string header;
    for (const auto& h : table.header) header += (header.empty() ? "" : ", ") + h;
    std::vector<std::string> rows;
    rows.reserve(table.records.size());
    for (const auto& record : table.records) {
        std::string row;
        for (const auto& f : record.fields) row += (row.empty() ? "" : ", ") + f;
        rows.push_back(header);
        rows.back() += '\n';
        rows.back() += row;
    }
    return rows;
}

}  // namespace

void addSampleContent(report::RunPage& page) {
    if (page.samples.empty()) return;
    DataConfig data;
    try {
        data = configFromJson(page.run.summary.config_json).data;
    } catch (const std::exception& e) {
        page.samples_note = std::string("The samples' images or texts are not shown: this Hearth cannot read the run's config (") +
                            e.what() + ").";
        return;
    }
    const bool test = page.samples_split == "test";
    const std::string path = sourceFile(data, test);
    try {
        if (data.kind == "idx") {
            addImages(page, data, test);
        } else if (data.kind == "text_csv") {
            addTexts(page, readTextCsv(path, data.text_column, /*label_column=*/"").texts, path);
        } else if (data.kind == "wordnet") {
            const std::string file = fs::is_directory(path) ? (fs::path(path) / "data.noun").string() : path;
            addTexts(page, readWordNetGlosses(file).texts, file);
        } else if (data.kind == "csv") {
            addTexts(page, csvRows(path), path);
        } else if (data.kind == "image_folder") {
            addImageFolderFiles(page, data.path, test);
        } else {
            page.samples_note = "The samples' data is not shown: this Hearth does not know data of kind '" + data.kind + "'.";
        }
    } catch (const std::exception& e) {
        page.samples_note = std::string("The samples' ") + (isImageKind(data.kind) ? "images" : "texts") +
                            " are not shown: the run's data cannot be read here (" + e.what() + ").";
    }
}

}  // namespace hearth::cli
