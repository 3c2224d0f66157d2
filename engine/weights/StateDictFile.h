#pragma once
// StateDictFile: reads a state_dict written by Python's torch.save (the zip format of PyTorch
// 1.6+: data.pkl plus one record per storage) without Python. LibTorch's own pickle_load turns
// the collections.OrderedDict that state_dict() returns into None, so a small pickle machine
// here understands exactly what a state_dict pickles: dicts and OrderedDicts, strings, numbers,
// tuples, tensors (torch._utils._rebuild_tensor_v2 / _rebuild_parameter over typed storages of
// any dtype), and ignores the OrderedDict's _metadata. Anything else (a pickled module, an
// optimizer, a custom class) is refused naming what was found. The legacy (non-zip) format goes
// to LibTorch's pickle_load.

#include <torch/torch.h>

#include <map>
#include <string>

namespace hearth {

// name -> tensor (on the CPU, in the stored dtype). Throws DataError naming `path`.
std::map<std::string, torch::Tensor> readStateDictFile(const std::string& path);

}  // namespace hearth
