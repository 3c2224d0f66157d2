# Sources of engine/train (listed, not globbed).
target_sources(hearth_engine PRIVATE
  train/Task.cpp
  train/Callback.cpp
  train/LoopState.cpp
  train/FitProgress.cpp
  train/RandomState.cpp
  train/TrainingState.cpp
  train/Checkpoint.cpp
  train/EarlyStopping.cpp
  train/SafetyCheckpoint.cpp
  train/Evaluation.cpp
  train/RankReport.cpp
  train/StepProfiler.cpp
  train/MemoryAccounting.cpp
  train/DeviceStatsMonitor.cpp
  train/MetricsLogger.cpp
  train/TrainerParts.cpp
  train/Trainer.cpp)
# The safety checkpoints' file names (torch-free: hearth-cli and the workbench look for them).
target_sources(hearth_engine_api PRIVATE
  train/StateFiles.cpp)
