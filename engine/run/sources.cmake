# Sources of engine/run (listed, not globbed).
# The launch plan is torch-free: hearth_engine_api (the workbench and hearth-cli decide with it).
target_sources(hearth_engine_api PRIVATE
  run/LaunchPlan.cpp
  run/FinderJson.cpp
  run/Footprint.cpp)
target_sources(hearth_engine PRIVATE
  run/RunSetup.cpp
  run/DataInputs.cpp
  run/RunController.cpp
  run/TextPredictor.cpp
  run/ImagePredictor.cpp
  run/TablePredictor.cpp
  run/NormalizationFile.cpp
  run/PredictionsCsv.cpp
  run/ModelExport.cpp
  run/Finders.cpp
  run/FinderSteps.cpp)
