# Sources of engine/train (listed, not globbed).
target_sources(hearth_engine PRIVATE
  train/GradScaler.cpp
  train/Precision.cpp
  train/Optimizers.cpp
  train/Schedulers.cpp
  train/Checkpoint.cpp
  train/Evaluation.cpp
  train/Trainer.cpp)
