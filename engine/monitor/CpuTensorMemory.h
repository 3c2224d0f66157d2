#pragma once
// CpuTensorMemory: exact bytes of CPU tensor memory, counted by a thin wrapper around LibTorch's
// CPU allocator (the host's counterpart of the CUDA caching allocator's statistics). Peak RSS
// says what the process costs the machine; these counters say how much of it tensors held, so
// the memory breakdown's activations on a CPU are not blurred by the C heap keeping freed blocks.
// Process-wide: every thread's CPU tensors (loader workers' batches included). Memory that
// bypasses the allocator (oneDNN's scratchpads, the C heap) is not counted.

#include <cstdint>

namespace hearth {

struct CpuTensorMemoryStats {
    bool counting = false;       // the wrapper is installed
    int64_t current_bytes = 0;   // allocated through it and not yet freed
    int64_t peak_bytes = 0;      // the most at once since the last resetCpuTensorPeak()
};

// Installs the counting allocator (once per process; later calls do nothing). Tensors allocated
// before are freed by their own allocator and never counted. False when LibTorch refused it.
bool installCpuTensorCounting();
CpuTensorMemoryStats cpuTensorMemory();
// Starts the peak over from the bytes held now.
void resetCpuTensorPeak();

}  // namespace hearth
