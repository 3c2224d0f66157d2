# The Compare tab: runs side by side.
target_sources(hearth_ui PRIVATE
  compare/CompareView.h compare/CompareView.cpp)
