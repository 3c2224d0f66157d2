# The run behind the views: training session, UI event sink, technique ladder, metatypes, and the
# writer jobs the GUI submits.
target_sources(hearth_ui PRIVATE
  session/MetaTypes.h session/MetaTypes.cpp
  session/UiEventSink.h session/UiEventSink.cpp
  session/WriterJobs.h session/WriterJobs.cpp
  session/TrainingSession.h session/TrainingSession.cpp
  session/LadderRunner.h session/LadderRunner.cpp)
