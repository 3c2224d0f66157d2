# Sources of engine/events (listed, not globbed): the events' JSON forms, in hearth_engine_api.
target_sources(hearth_engine_api PRIVATE
  events/RunJson.cpp
  events/EventJson.cpp
  events/EventFields.cpp)
