# Sources of engine/metrics (listed, not globbed).
# Torch-free: part of hearth_engine_api.
target_sources(hearth_engine_api PRIVATE
  metrics/ClassificationReport.cpp
  metrics/RunProfile.cpp)
