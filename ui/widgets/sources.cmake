# Small pieces every view uses: number formats, plot theme, the validated field, the sort header.
target_sources(hearth_ui PRIVATE
  widgets/Format.h widgets/Format.cpp
  widgets/PlotTheme.h widgets/PlotTheme.cpp
  widgets/StackedBars.h widgets/StackedBars.cpp
  widgets/ProfileBars.h widgets/ProfileBars.cpp
  widgets/SortHeader.h widgets/SortHeader.cpp
  widgets/ValidatedField.h widgets/ValidatedField.cpp)
