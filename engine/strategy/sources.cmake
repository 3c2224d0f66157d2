# Sources of engine/strategy (listed, not globbed).
target_sources(hearth_engine PRIVATE
  strategy/GradScaler.cpp
  strategy/Precision.cpp
  strategy/CheckpointFile.cpp
  strategy/Strategy.cpp)
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE strategy/CudaGraphStep.cpp)   # trainer.cuda_graph=step
endif()
