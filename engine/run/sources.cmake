# Sources of engine/run (listed, not globbed).
target_sources(hearth_engine PRIVATE
  run/RunSetup.cpp
  run/RunController.cpp
  run/TechniqueLadder.cpp
  run/TextPredictor.cpp
  run/Finders.cpp
  run/FinderSteps.cpp)
