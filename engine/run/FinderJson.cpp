#include "engine/run/FinderJson.h"

#include "engine/events/EventJson.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace hearth::finderjson {
namespace {

using json = nlohmann::json;

json trialJson(const BatchSizeTrial& t) {
    return json{{"batch_size", t.batch_size}, {"fits", t.fits},       {"peak_bytes", t.peak_bytes},
                {"seconds", t.seconds},       {"failure", t.failure}};
}

json pointJson(const LrPoint& p) {
    return json::array({p.lr, p.loss, p.smoothed_loss});
}

// A non-finite loss (a diverged step) has no JSON number: it is written as null and read back as NaN.
double numberOr(const json& j, double fallback) {
    return j.is_number() ? j.get<double>() : fallback;
}

LrPoint pointFrom(const json& p) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return LrPoint{numberOr(p.at(0), nan), numberOr(p.at(1), nan), numberOr(p.at(2), nan)};
}

BatchSizeTrial trialFrom(const json& j) {
    BatchSizeTrial t;
    t.batch_size = j.at("batch_size").get<int64_t>();
    t.fits = j.at("fits").get<bool>();
    t.peak_bytes = j.value("peak_bytes", int64_t{0});
    t.seconds = j.value("seconds", 0.0);
    t.failure = j.value("failure", std::string());
    return t;
}

json toJson(const Line& line) {
    struct Encode {
        json operator()(const Progress& p) const {
            return json{{"event", "finder_progress"}, {"fraction", p.fraction}, {"what", p.what}};
        }
        json operator()(const Log& l) const { return json{{"event", "finder_log"}, {"text", l.text}}; }
        json operator()(const BatchSizeTrial& t) const {
            json j = trialJson(t);
            j["event"] = "finder_trial";
            return j;
        }
        json operator()(const LrPoint& p) const { return json{{"event", "lr_point"}, {"point", pointJson(p)}}; }
        json operator()(const BatchSizeResult& r) const {
            json trials = json::array();
            for (const auto& t : r.trials) trials.push_back(trialJson(t));
            return json{{"event", "batch_size_result"}, {"batch_size", r.batch_size},
                        {"first_failure", r.first_failure}, {"trials", trials},
                        {"device", r.device},               {"limit", r.limit},
                        {"baseline_bytes", r.baseline_bytes}, {"bound", r.bound},
                        {"settling", r.settling},           {"stopped", r.stopped}};
        }
        json operator()(const LrFinderResult& r) const {
            json points = json::array();
            for (const auto& p : r.points) points.push_back(pointJson(p));
            json j{{"event", "lr_result"}, {"points", points}, {"diverged", r.diverged}, {"stopped", r.stopped}};
            if (r.suggestion_index) j["suggestion_index"] = *r.suggestion_index;
            if (r.suggestion) j["suggestion"] = *r.suggestion;
            return j;
        }
        json operator()(const Failure& f) const {
            return json{{"event", "finder_failed"}, {"kind", eventjson::failureKindName(f.kind)}, {"message", f.message}};
        }
    };
    return std::visit(Encode{}, line);
}

Line fromJson(const json& j, const std::string& kind) {
    if (kind == "finder_progress") return Progress{j.at("fraction").get<double>(), j.value("what", std::string())};
    if (kind == "finder_log") return Log{j.at("text").get<std::string>()};
    if (kind == "finder_trial") return trialFrom(j);
    if (kind == "lr_point") return pointFrom(j.at("point"));
    if (kind == "batch_size_result") {
        BatchSizeResult r;
        r.batch_size = j.at("batch_size").get<int64_t>();
        r.first_failure = j.value("first_failure", int64_t{0});
        for (const auto& t : j.at("trials")) r.trials.push_back(trialFrom(t));
        r.device = j.value("device", std::string());
        r.limit = j.value("limit", std::string());
        r.baseline_bytes = j.value("baseline_bytes", int64_t{0});
        r.bound = j.value("bound", std::string());
        r.settling = j.value("settling", std::string());
        r.stopped = j.value("stopped", false);
        return r;
    }
    if (kind == "lr_result") {
        LrFinderResult r;
        for (const auto& p : j.at("points")) r.points.push_back(pointFrom(p));
        if (j.contains("suggestion_index")) r.suggestion_index = j["suggestion_index"].get<size_t>();
        if (j.contains("suggestion")) r.suggestion = j["suggestion"].get<double>();
        r.diverged = j.value("diverged", false);
        r.stopped = j.value("stopped", false);
        return r;
    }
    if (kind == "finder_failed")
        return Failure{eventjson::failureKindFromName(j.value("kind", "training")), j.value("message", std::string())};
    throw json::other_error::create(501, "not a finder line", &j);
}

}  // namespace

std::string toLine(const Line& line) {
    // Replace, not throw, on text that is not UTF-8 (a file name in a message).
    return toJson(line).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Line> fromLine(const std::string& text) {
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) return std::nullopt;
    try {
        return fromJson(j, j["event"].get<std::string>());
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

}  // namespace hearth::finderjson
