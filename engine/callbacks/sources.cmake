# Sources of engine/callbacks (listed, not globbed): code the Trainer runs at fixed points of the
# fit, as Lightning's callbacks.
target_sources(hearth_engine PRIVATE
  callbacks/Callback.cpp
  callbacks/BestCheckpoint.cpp
  callbacks/EarlyStopping.cpp
  callbacks/SafetyCheckpoint.cpp
  callbacks/DeviceStatsMonitor.cpp)
