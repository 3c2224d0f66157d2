# The Compare tab: runs side by side, from two to a thousand.
target_sources(hearth_ui PRIVATE
  compare/CompareView.h compare/CompareView.cpp
  compare/CompareRun.h compare/CompareRun.cpp
  compare/RunColoring.h compare/RunColoring.cpp
  compare/CompareCurves.h compare/CompareCurves.cpp
  compare/CompareLegend.h compare/CompareLegend.cpp
  compare/CompareBars.h compare/CompareBars.cpp
  compare/SweepScatter.h compare/SweepScatter.cpp
  compare/CompareTables.h compare/CompareTables.cpp
  compare/LadderPanel.h compare/LadderPanel.cpp)
