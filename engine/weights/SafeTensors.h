#pragma once
// SafeTensors: reads Hugging Face's safetensors checkpoints: an 8-byte little-endian header
// length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the tensors' bytes, little-endian, C order. The file is mapped
// into memory and each tensor views its bytes (no copy; the mapping lives as long as any tensor
// does), unless a tensor's bytes are misaligned for its type, when it is copied. Every claim of
// the header is checked against the file before a byte is read: a header length past the end or
// over 100 MB, offsets out of range, overlapping or leaving gaps, sizes that do not match
// shape x dtype, unknown dtypes. Also sharded checkpoints (model.safetensors.index.json).

#include <torch/torch.h>

#include <map>
#include <string>

namespace hearth {

// name -> tensor, in name order. Throws DataError naming the file and the problem.
std::map<std::string, torch::Tensor> readSafeTensors(const std::string& path);

// A checkpoint folder's tensors: model.safetensors, or the shards model.safetensors.index.json
// lists. Throws DataError when the folder has neither, naming what it looked for.
std::map<std::string, torch::Tensor> readSafeTensorsFolder(const std::string& folder);

}  // namespace hearth
