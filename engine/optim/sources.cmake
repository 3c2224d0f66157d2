# Sources of engine/optim (listed, not globbed): optimizers by name and kernel, LR schedules.
target_sources(hearth_engine PRIVATE
  optim/Optimizers.cpp
  optim/MultiTensorOptimizers.cpp
  optim/Schedulers.cpp)
