target_sources(hearth_engine PRIVATE
  config/ConfigSchema.cpp
  config/ExperimentConfig.cpp
  config/ConfigValidation.cpp
  config/DeviceInfo.cpp)
# CUDA stack versions and device facts exist only in CUDA builds of LibTorch.
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE config/CudaInfo.cpp)
endif()
