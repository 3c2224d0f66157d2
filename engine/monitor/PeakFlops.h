#pragma once
// The dense (no sparsity) peak FLOP rate a GPU model's datasheet gives for a run's precision, the
// denominator of MFU (model FLOPs utilisation): bf16 or fp16 tensor cores for the mixed and half
// precisions, TF32 tensor cores for 32-true with trainer.tf32 on, plain FP32 for 32-true without it.
// A table by device name; no LibTorch.

#include <optional>
#include <string>

namespace hearth {

struct PeakFlops {
    double tflops = 0.0;   // 10^12 FLOP/s
    std::string basis;     // "NVIDIA H200: 989.4 TFLOP/s dense bf16"
};

// nullopt for a device the table does not know (any CPU among them) or a precision without a
// tensor-core or FP32 figure (64-true).
std::optional<PeakFlops> densePeakFlops(const std::string& device_name, const std::string& precision, bool tf32);

}  // namespace hearth
