# Small pieces every view uses: number formats, plot theme, the validated field, the sort header,
# a column's own elision.
target_sources(hearth_ui PRIVATE
  widgets/Format.h widgets/Format.cpp
  widgets/PlotTheme.h widgets/PlotTheme.cpp
  widgets/StackedBars.h widgets/StackedBars.cpp
  widgets/ProfileBars.h widgets/ProfileBars.cpp
  widgets/SortHeader.h widgets/SortHeader.cpp
  widgets/ElideDelegate.h
  widgets/ValidatedField.h widgets/ValidatedField.cpp)
