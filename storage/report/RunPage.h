#pragma once
// The report of one run as one self-contained HTML page: interactive curves (dygraphs: zoom,
// values on hover, every stored step), the classification report and confusion-matrix heatmap,
// the samples the model got most confidently wrong, the step-time and memory breakdowns
// (Chart.js), timings, the settings that ran beside those asked for, the environment, notes and
// tags. A stopped, interrupted, failed or partly unreadable run still makes a page: it shows
// what there is and says what is missing and why. No Qt; the samples' images and texts are read
// by the caller (the data readers live in the engine, which storage does not link).

#include "storage/report/PngImage.h"
#include "storage/report/RunReport.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::report {

inline constexpr size_t kReportSampleCount = 24;

// One misclassified sample as the page shows it.
struct ReportSample {
    Prediction prediction;
    std::optional<GrayImage> image;   // image data
    std::string image_url;            // image folders: the sample's own file as a data: URL
    std::string text;                 // text data: the text; CSV data: the header and the row; image folders: the file
};

struct RunPage;
// Image folders: each sample's file (`files`: the split's listing, ImageFolderScan's order) inlined
// as it is on disk (JPEG or PNG, at most 4 MiB) with its path as the text; a note for samples
// beyond the listing or files that cannot be read.
void addImageFiles(RunPage& page, const std::vector<std::string>& files);
// The same for a run on the image folder `root`: the split's files as ImageFolderScan lists them
// (test: the folder's test/, else the listing the split was carved from). Throws DataError.
void addImageFolderFiles(RunPage& page, const std::string& root, bool test);

struct RunPage {
    StoredRun run;
    std::vector<StepMetrics> steps;
    std::string samples_split;           // the split the samples come from ("test", else "val")
    int64_t predictions = 0;             // stored predictions of that split
    int64_t misclassified = 0;           // of them, wrong
    std::vector<ReportSample> samples;   // the most confident mistakes, at most kReportSampleCount
    std::string samples_note;            // why the samples' images or texts are not shown
    std::vector<std::string> unreadable; // parts the store could not read, each with the reason
    std::string generated_from;          // the database path, for the footer
};

// Reads everything the page shows. Throws StoreError only when there is no such run (or the
// store cannot be read at all); a part that cannot be read is left empty and named in
// `unreadable`. The samples hold their predictions; images and texts are the caller's to add.
RunPage loadRunPage(const RunStore& store, int64_t run_id);

// What the page lacks, in the user's words ("No test report: the run failed before testing.").
std::vector<std::string> missingParts(const RunPage& page);

// The page, and its title ("Run #12 fashion-cnn").
std::string runPageHtml(const RunPage& page);
std::string runPageTitle(const RunSummary& summary);

// The page's data block (steps, epochs, breakdowns) as JSON: what its charts draw.
std::string runPageData(const RunPage& page);

}  // namespace hearth::report
