# Sources of engine/ladder (listed, not globbed): the technique and memory ladders, planned,
# judged over repeats and explained.
# Judging and explaining are torch-free: hearth_engine_api (the CLI, the workbench and the reports).
target_sources(hearth_engine_api PRIVATE
  ladder/LadderPlanJson.cpp
  ladder/LadderVerdict.cpp
  ladder/LadderWhy.cpp)
target_sources(hearth_engine PRIVATE
  ladder/TechniqueLadder.cpp
  ladder/LadderPlan.cpp)
