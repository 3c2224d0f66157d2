# Sources of engine/strategy (listed, not globbed).
target_sources(hearth_engine PRIVATE
  strategy/GradScaler.cpp
  strategy/Precision.cpp
  strategy/CheckpointFile.cpp
  strategy/Strategy.cpp)
