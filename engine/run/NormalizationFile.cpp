#include "engine/run/NormalizationFile.h"

#include "engine/data/DataError.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace hearth {
namespace {

constexpr const char* kFileName = "normalization.json";

}  // namespace

void writeNormalizationFile(const std::string& artifacts_dir, const std::string& kind, const DataSplits& splits) {
    const auto& n = splits.normalization;
    if (artifacts_dir.empty() || n.scaling.mean.empty() || !splits.train) return;
    nlohmann::json j;
    j["kind"] = kind;
    j["sample_shape"] = splits.train->sampleShape();
    if (!n.features.empty()) j["features"] = n.features;
    j["mean"] = n.scaling.mean;
    j["std"] = n.scaling.std;
    std::filesystem::create_directories(artifacts_dir);
    const std::string path = (std::filesystem::path(artifacts_dir) / kFileName).string();
    std::ofstream out(path, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) throw DataError(path + ": cannot write the run's input normalization");
}

std::optional<StoredNormalization> readNormalizationFile(const std::string& checkpoint, const std::string& kind) {
    const std::string path = (std::filesystem::path(checkpoint).parent_path() / kFileName).string();
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        const nlohmann::json j = nlohmann::json::parse(in);
        StoredNormalization stored;
        stored.kind = j.at("kind").get<std::string>();
        stored.sample_shape = j.at("sample_shape").get<std::vector<int64_t>>();
        if (j.contains("features")) stored.normalization.features = j.at("features").get<std::vector<std::string>>();
        stored.normalization.scaling.mean = j.at("mean").get<std::vector<double>>();
        stored.normalization.scaling.std = j.at("std").get<std::vector<double>>();
        if (stored.kind != kind) throw DataError("it is for " + stored.kind + " data, the run's is " + kind);
        const size_t values = stored.normalization.scaling.mean.size();
        const bool per_feature = !stored.normalization.features.empty();
        if (values == 0 || stored.normalization.scaling.std.size() != values ||
            (per_feature && stored.normalization.features.size() != values))
            throw DataError("its mean, std and features differ in length");
        return stored;
    } catch (const std::exception& e) {
        throw DataError(path + ": the run's input normalization cannot be read (" + e.what() + ")");
    }
}

PixelNormalization pixelNormalization(const FeatureScaling& scaling) {
    PixelNormalization norm;
    if (scaling.mean.size() == 1) {
        norm.mean = scaling.mean.front();
        norm.std = scaling.std.front();
    } else {
        norm.channel_mean = scaling.mean;
        norm.channel_std = scaling.std;
    }
    return norm;
}

}  // namespace hearth
