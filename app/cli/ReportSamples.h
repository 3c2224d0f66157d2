#pragma once
// The misclassified samples of a run's report page, read from the run's own data files with the
// engine's readers (storage, which renders the page, does not link the engine): IDX images,
// text-CSV and WordNet texts, CSV rows.

namespace hearth::report {
struct RunPage;
}

namespace hearth::cli {

// Fills page.samples' images or texts; when the data cannot be read (moved, another machine,
// a config this build cannot read) the samples keep their labels and page.samples_note says why.
void addSampleContent(report::RunPage& page);

}  // namespace hearth::cli
