# The Live tab: plots, progress, memory gauges, log and failure banner of the running run.
target_sources(hearth_ui PRIVATE
  live/LivePlots.h live/LivePlots.cpp
  live/BreakdownChart.h live/BreakdownChart.cpp
  live/ProgressPanel.h live/ProgressPanel.cpp
  live/MemoryGauge.h live/MemoryGauge.cpp
  live/DeviceMonitorPanel.h live/DeviceMonitorPanel.cpp
  live/LogPane.h live/LogPane.cpp
  live/FailureBanner.h live/FailureBanner.cpp
  live/LiveView.h live/LiveView.cpp)
