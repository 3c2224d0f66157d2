#include "engine/ladder/LadderWhy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace hearth {
namespace {

bool isData(const std::string& r) {
    return r == "workers" || r == "pinned" || r == "decoded cache" || r == "data on device";
}
bool isStrategy(const std::string& r) {
    return r == "ddp" || r == "zero1" || r == "zero2" || r == "zero3" || r == "offload" || r == "pipeline";
}
bool isMemory(const std::string& r) {
    return r == "checkpointing" || r == "zero1" || r == "zero2" || r == "zero3" || r == "offload" || r == "pipeline";
}
bool measured(const StepBreakdown& b) { return b.profiled > 0 && b.step_ms > 0.0; }
bool bothMeasured(const WhyEvidence& e) { return measured(e.step) && measured(e.reference); }
double dataMs(const StepBreakdown& b) { return b.data_wait_ms + b.host_to_device_ms; }

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0, double d = 0.0) {
    char text[256];
    std::snprintf(text, sizeof text, pattern, a, b, c, d);
    return text;
}

std::string mib(int64_t bytes) {
    return format("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

struct Part {
    const char* name;
    double StepBreakdown::*ms;
};
constexpr std::array<Part, 7> kParts{{{"data wait", &StepBreakdown::data_wait_ms},
                                      {"the copy to the device", &StepBreakdown::host_to_device_ms},
                                      {"forward", &StepBreakdown::forward_ms},
                                      {"backward", &StepBreakdown::backward_ms},
                                      {"communication wait", &StepBreakdown::comm_wait_ms},
                                      {"the optimizer", &StepBreakdown::optimizer_ms},
                                      {"reading metrics back", &StepBreakdown::sync_ms}}};

// The part whose time moved most in the direction `sign` (+1 grew, -1 shrank, 0 either).
const Part* mostMoved(const WhyEvidence& e, int sign) {
    const Part* best = nullptr;
    double best_delta = 0.0;
    for (const auto& p : kParts) {
        const double delta = e.step.*p.ms - e.reference.*p.ms;
        const double score = sign == 0 ? std::abs(delta) : sign * delta;
        if (score > best_delta) {
            best_delta = score;
            best = &p;
        }
    }
    return best;
}

std::string partMove(const WhyEvidence& e, const Part& p, const char* verb) {
    return std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(p.name[0])))) + (p.name + 1) + " " +
           verb + format(" from %.2f to %.2f ms per micro-batch", e.reference.*p.ms, e.step.*p.ms);
}

}  // namespace

const std::vector<WhyRule>& whyRules() {
    static const std::vector<WhyRule> rules{
        {"loader already kept up",
         [](const WhyEvidence& e) {
             return isData(e.rung) && e.change != SpeedChange::Faster && measured(e.reference) &&
                    dataMs(e.reference) < 0.03 * e.reference.step_ms;
         },
         [](const WhyEvidence& e) {
             return format("Data wait was already %.1f%% of a step (%.2f of %.2f ms): there was little for the loader "
                           "to win.",
                           100.0 * dataMs(e.reference) / e.reference.step_ms, dataMs(e.reference), e.reference.step_ms);
         }},
        {"data wait fell",
         [](const WhyEvidence& e) {
             return isData(e.rung) && e.change == SpeedChange::Faster && bothMeasured(e) &&
                    dataMs(e.step) < dataMs(e.reference);
         },
         [](const WhyEvidence& e) {
             return format("Data wait and copies fell from %.1f%% to %.1f%% of a step (%.2f to %.2f ms).",
                           100.0 * dataMs(e.reference) / e.reference.step_ms, 100.0 * dataMs(e.step) / e.step.step_ms,
                           dataMs(e.reference), dataMs(e.step));
         }},
        {"still waits for data",
         [](const WhyEvidence& e) { return measured(e.step) && e.step.data_wait_ms > 0.2 * e.step.step_ms; },
         [](const WhyEvidence& e) {
             return format("%.0f%% of a step still waits for data: more loader workers, the decoded cache or data "
                           "on the device would cut it.",
                           100.0 * e.step.data_wait_ms / e.step.step_ms);
         }},
        {"launch bound",
         [](const WhyEvidence& e) {
             return e.gpu_busy >= 0.0 && e.gpu_busy < 0.5 && e.change != SpeedChange::Faster && !isData(e.rung) &&
                    e.rung != "cuda graph";
         },
         [](const WhyEvidence& e) {
             return format("The GPU was busy %.0f%% of the time: the step is bound by kernel launches and the host, "
                           "which this rung does not change; the CUDA graph rung replays the step in one launch.",
                           100.0 * e.gpu_busy);
         }},
        {"communication",
         [](const WhyEvidence& e) {
             return isStrategy(e.rung) && bothMeasured(e) &&
                    e.step.comm_wait_ms - e.reference.comm_wait_ms > 0.05 * e.reference.step_ms;
         },
         [](const WhyEvidence& e) {
             return format("+%.2f ms of communication wait per micro-batch (%.0f%% of its step).",
                           e.step.comm_wait_ms - e.reference.comm_wait_ms, 100.0 * e.step.comm_wait_ms / e.step.step_ms);
         }},
        {"memory saved",
         [](const WhyEvidence& e) {
             return isMemory(e.rung) && e.peak_bytes > 0 && e.reference_peak_bytes > 0;
         },
         [](const WhyEvidence& e) {
             const double change = 100.0 * static_cast<double>(e.peak_bytes - e.reference_peak_bytes) /
                                   static_cast<double>(e.reference_peak_bytes);
             std::string s = "Peak memory " + mib(e.reference_peak_bytes) + " -> " + mib(e.peak_bytes) +
                             format(" (%+.0f%%)", change);
             if (e.device_total_bytes > 0 &&
                 static_cast<double>(e.reference_peak_bytes) < 0.5 * static_cast<double>(e.device_total_bytes))
                 s += format("; at %.0f%% of the device's memory before it, there was no memory pressure to relieve",
                             100.0 * static_cast<double>(e.reference_peak_bytes) /
                                 static_cast<double>(e.device_total_bytes));
             return s + ".";
         }},
        {"a part shrank",
         [](const WhyEvidence& e) {
             return e.change == SpeedChange::Faster && bothMeasured(e) && mostMoved(e, -1) != nullptr;
         },
         [](const WhyEvidence& e) { return partMove(e, *mostMoved(e, -1), "fell") + "."; }},
        {"a part grew",
         [](const WhyEvidence& e) {
             return e.change == SpeedChange::Slower && bothMeasured(e) && mostMoved(e, +1) != nullptr;
         },
         [](const WhyEvidence& e) { return partMove(e, *mostMoved(e, +1), "grew") + "."; }},
        {"nothing moved",
         [](const WhyEvidence& e) { return e.change == SpeedChange::NoMeasurableChange && bothMeasured(e); },
         [](const WhyEvidence& e) {
             std::string s = format("A micro-batch took %.2f ms against %.2f ms", e.step.step_ms, e.reference.step_ms);
             if (const Part* p = mostMoved(e, 0))
                 s += std::string(" (the largest move: ") + p->name +
                      format(" %.2f -> %.2f ms)", e.reference.*p->ms, e.step.*p->ms);
             return s + ".";
         }},
        {"no breakdown",
         [](const WhyEvidence& e) { return !bothMeasured(e); },
         [](const WhyEvidence&) {
             return std::string("No step-time breakdown was recorded for it and its reference "
                                "(trainer.profile_every_n_steps = 0), so the time is not taken apart.");
         }},
    };
    return rules;
}

std::vector<std::string> whyLines(const WhyEvidence& evidence) {
    std::vector<std::string> lines;
    for (const auto& rule : whyRules()) {
        if (!rule.holds(evidence)) continue;
        lines.push_back(rule.say(evidence));
        if (lines.size() == 2) break;
    }
    return lines;
}

}  // namespace hearth
