# Sources of engine/metrics (listed, not globbed).
target_sources(hearth_engine PRIVATE
  metrics/ClassificationReport.cpp)
