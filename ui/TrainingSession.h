#pragma once
// Forwarding header for bench/ui_latency.cpp, which still includes the flat ui/ path (bench/ is
// edited on another branch). Remove once it includes "ui/session/TrainingSession.h".
#include "ui/session/TrainingSession.h"
