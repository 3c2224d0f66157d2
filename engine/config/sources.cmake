target_sources(hearth_engine PRIVATE
  config/ExperimentConfig.cpp
  config/ConfigValidation.cpp
  config/DeviceInfo.cpp)
