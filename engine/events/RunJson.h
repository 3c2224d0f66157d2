#pragma once
// JSON text of the run columns that hold structured values (environment, effective settings,
// the dataset/model facts of RunStarted), in both directions.

#include "engine/events/Events.h"

#include <map>
#include <string>

namespace hearth::runjson {

std::string environmentToJson(const EnvironmentInfo& env);
EnvironmentInfo environmentFromJson(const std::string& text);

std::string effectiveToJson(const std::map<std::string, std::string>& effective);
std::map<std::string, std::string> effectiveFromJson(const std::string& text);

// Sizes, batches, class names, model summary and parameter count of a RunStarted.
std::string setupToJson(const RunStarted& started);
void setupFromJson(const std::string& text, RunStarted& started);

const char* levelName(LogLine::Level level);
LogLine::Level levelFromName(const std::string& name);

}  // namespace hearth::runjson
