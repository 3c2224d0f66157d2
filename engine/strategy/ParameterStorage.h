#pragma once
// A parameter's storage freed between uses and given back: how zero3 keeps only its shards and a
// pipeline stage only its own part of the model. The tensor's shape and strides stay (the model
// summary, FLOPs and effective settings read as before), and so do the autograd graph's
// references to it: what is copied in before backward is what backward reads.

#include <torch/torch.h>

#include <cstddef>

namespace hearth {

// 0 bytes; nothing to do when already freed.
inline void freeStorage(const torch::Tensor& t) {
    auto* storage = t.storage().unsafeGetStorageImpl();
    if (storage->nbytes() == 0) return;
    storage->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
    storage->set_nbytes(0);
}

// `bytes` (the storage's size when whole), uninitialised; nothing to do when it has them.
inline void allocateStorage(const torch::Tensor& t, size_t bytes) {
    auto* storage = t.storage().unsafeGetStorageImpl();
    if (storage->nbytes() == bytes) return;
    storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
    storage->set_nbytes(bytes);
}

}  // namespace hearth
