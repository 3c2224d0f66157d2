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

// `bytes` (the storage's size when whole), uninitialised; nothing to do when it has them. A
// storage read from a file (a TorchScript module's) has no allocator of its own: the device's.
inline void allocateStorage(const torch::Tensor& t, size_t bytes) {
    auto* storage = t.storage().unsafeGetStorageImpl();
    if (storage->nbytes() == bytes) return;
    c10::Allocator* allocator = storage->allocator() ? storage->allocator() : c10::GetAllocator(t.device().type());
    storage->set_data_ptr_noswap(allocator->allocate(bytes));
    storage->set_nbytes(bytes);
}

}  // namespace hearth
