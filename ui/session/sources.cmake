# The run behind the views: training session, UI event sink, technique ladder, metatypes, and the
# store as the GUI thread uses it (writer jobs, a view's own loader thread).
target_sources(hearth_ui PRIVATE
  session/MetaTypes.h session/MetaTypes.cpp
  session/UiEventSink.h session/UiEventSink.cpp
  session/WriterJobs.h session/WriterJobs.cpp
  session/StoreLoader.h session/StoreLoader.cpp
  session/ReadOnPool.h
  session/TrainingSession.h session/TrainingSession.cpp
  session/CliProcess.h session/CliProcess.cpp
  session/ProcessRun.h session/ProcessRun.cpp
  session/LadderRunner.h session/LadderRunner.cpp
  session/DeviceProbe.h session/DeviceProbe.cpp)
