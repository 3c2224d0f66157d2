#pragma once
// HfCheckpoint: builds a TransformerClassifier from a Hugging Face checkpoint folder
// (config.json + model.safetensors, its shards with model.safetensors.index.json, or a plain-dict
// pytorch_model.bin) and copies the weights in. Names are matched with or without the family's
// prefix ("bert." / "distilbert."); old LayerNorm names (gamma/beta) are understood. The
// masked-LM / pre-training heads of a base checkpoint and position_ids buffers are ignored; a
// missing or differently sized classification head (and a missing BERT pooler) is initialised
// anew and reported; any other missing, unexpected or mis-shaped tensor is an error listing them.

#include "engine/models/Transformer.h"

#include <map>
#include <string>

namespace hearth {

// The folder's tensors by name (safetensors first, then pytorch_model.bin). Throws DataError.
std::map<std::string, torch::Tensor> readCheckpointTensors(const std::string& folder);

// Copies `tensors` into `model` (dtype converted); returns what was initialised anew or ignored
// ("classifier (new: the checkpoint has no classification head)"). Throws DataError naming
// `source` and every offending tensor.
std::vector<std::string> loadCheckpointWeights(TransformerClassifierImpl& model,
                                               const std::map<std::string, torch::Tensor>& tensors,
                                               const std::string& source);

// A classifier for `num_labels` classes from `folder`; `family` ("bert" / "distilbert") must
// match its config.json (ConfigError on model.name otherwise).
TransformerClassifier loadPretrainedClassifier(const std::string& folder, const std::string& family,
                                               int64_t num_labels);

}  // namespace hearth
