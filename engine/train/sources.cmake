# Sources of engine/train (listed, not globbed).
target_sources(hearth_engine PRIVATE
  train/Task.cpp
  train/LoopState.cpp
  train/FitProgress.cpp
  train/RandomState.cpp
  train/TrainingState.cpp
  train/Evaluation.cpp
  train/RankReport.cpp
  train/MetricsLogger.cpp
  train/TrainerParts.cpp
  train/Trainer.cpp)
# The safety checkpoints' file names (torch-free: hearth-cli and the workbench look for them).
target_sources(hearth_engine_api PRIVATE
  train/StateFiles.cpp)
