# Sources of engine/optim (listed, not globbed): optimizers by name and kernel, the host-offloaded
# optimizer (trainer.offload_optimizer), LR schedules.
target_sources(hearth_engine PRIVATE
  optim/Optimizers.cpp
  optim/MultiTensorOptimizers.cpp
  optim/OffloadedOptimizer.cpp
  optim/Schedulers.cpp)
