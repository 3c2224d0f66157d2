# The History tab: every stored run as an editable, filterable table.
target_sources(hearth_ui PRIVATE
  history/HistoryModel.h history/HistoryModel.cpp
  history/HistoryView.h history/HistoryView.cpp)
