# The Report tab: one stored run's report, confusion matrix, samples and exports.
target_sources(hearth_ui PRIVATE
  report/IdxImages.h report/IdxImages.cpp
  report/SampleBrowser.h report/SampleBrowser.cpp
  report/ConfusionMatrixView.h report/ConfusionMatrixView.cpp
  report/ReportExporter.h report/ReportExporter.cpp
  report/ReportDocument.h report/ReportDocument.cpp
  report/PredictDialog.h report/PredictDialog.cpp
  report/ReportView.h report/ReportView.cpp)
