# Sources of engine/monitor (listed, not globbed).
target_sources(hearth_engine PRIVATE
  monitor/CpuTensorMemory.cpp
  monitor/ProcessMemory.cpp
  monitor/DeviceMonitor.cpp
  monitor/DeviceStatsSampler.cpp
  monitor/Nvml.cpp
  monitor/PeakFlops.cpp
  monitor/MemoryAccounting.cpp
  monitor/StepProfiler.cpp)
# CUDA allocator statistics exist only in CUDA builds of LibTorch (see LIBTORCH_COMPAT.md §4).
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE monitor/CudaMemory.cpp monitor/CudaTimer.cpp)
endif()
