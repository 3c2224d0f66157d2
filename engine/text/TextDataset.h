#pragma once
// TextDataset: labelled texts as token ids for transformer classifiers. getBatch() gives
// "input_ids" (int64 [B, T]), "label" (int64 [B]) and, when a row is padded, "attention_mask"
// (int64 [B, T], 1 = a real token; absent = every token is real). T is data.max_length with
// max_length padding, else the longest sample of the batch (dynamic padding). The loader's
// worker threads call it, so padding happens off the training thread.

#include "engine/data/Dataset.h"
#include "engine/text/TokenizedCorpus.h"

#include <memory>
#include <string>
#include <vector>

namespace hearth {

struct TextDatasetOptions {
    int64_t max_length = 512;
    bool pad_to_max_length = false;   // data.padding = max_length
    int32_t pad_id = 0;
};

class TextDataset final : public Dataset {
public:
    static constexpr const char* kInputIds = "input_ids";
    static constexpr const char* kAttentionMask = "attention_mask";

    // corpus[i] are the ids of texts[i], labels[i] its class; source_index[i] names the sample in
    // its file (row order), for per-sample predictions.
    TextDataset(TokenizedCorpus corpus, std::vector<std::string> texts, std::vector<int64_t> labels,
                std::vector<int64_t> source_index, std::vector<std::string> class_names, TextDatasetOptions options);

    int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
    Sample get(int64_t index) const override;        // input: the ids, int64 [length]
    Batch getBatch(const std::vector<int64_t>& indices) const override;
    std::vector<int64_t> sampleShape() const override { return {options_.max_length}; }
    const std::vector<std::string>& classNames() const override { return class_names_; }
    int64_t sourceIndex(int64_t index) const override;
    std::string describe(int64_t index) const override;  // the text
    int64_t sampleLength(int64_t index) const override;

    const std::string& text(int64_t index) const;
    const TokenizedCorpus& corpus() const { return corpus_; }
    const TextDatasetOptions& options() const { return options_; }

private:
    void checkIndex(int64_t index) const;

    TokenizedCorpus corpus_;
    std::vector<std::string> texts_;
    std::vector<int64_t> labels_;
    std::vector<int64_t> source_index_;
    std::vector<std::string> class_names_;
    TextDatasetOptions options_;
};

}  // namespace hearth
