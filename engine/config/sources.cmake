# Sources of engine/config (listed, not globbed).
# The key table, JSON and validation are torch-free: they form hearth_engine_api.
target_sources(hearth_engine_api PRIVATE
  config/ConfigSchema.cpp
  config/NoEffectRules.cpp
  config/ExperimentConfig.cpp
  config/ConfigValidation.cpp
  config/InputPaths.cpp
  config/ByteSize.cpp
  config/Spelling.cpp
  config/KeyNames.cpp
  config/RunName.cpp)
# What the machine and the build are: LibTorch and CUDA queries.
target_sources(hearth_engine PRIVATE
  config/DeviceInfo.cpp)
# CUDA stack versions and device facts exist only in CUDA builds of LibTorch.
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE config/CudaInfo.cpp)
endif()
