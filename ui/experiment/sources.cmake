# The experiment panel (left dock): the form, its binding to the config, config diffs.
target_sources(hearth_ui PRIVATE
  experiment/CheckpointSummary.h experiment/CheckpointSummary.cpp
  experiment/TorchScriptSummary.h experiment/TorchScriptSummary.cpp
  experiment/ConfigDiff.h experiment/ConfigDiff.cpp
  experiment/ExperimentForm.h experiment/ExperimentForm.cpp experiment/ExperimentFormBinding.cpp
  experiment/ExperimentPanel.h experiment/ExperimentPanel.cpp
  experiment/InputCheck.h experiment/InputCheck.cpp
  experiment/LadderPlanDialog.h experiment/LadderPlanDialog.cpp)
