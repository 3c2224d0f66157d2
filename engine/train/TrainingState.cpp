#include "engine/train/TrainingState.h"

#include "engine/optim/Optimizers.h"
#include "engine/strategy/CheckpointFile.h"
#include "engine/strategy/Strategy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fcntl.h>
#include <unistd.h>

namespace hearth {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kMagic = "hearth-training-state";

std::string shapeText(const torch::Tensor& t) {
    std::string out;
    for (int64_t i = 0; i < t.dim(); ++i) out += (i ? "x" : "") + std::to_string(t.size(i));
    return out.empty() ? "scalar" : out;
}

// The progress's JSON (the layout of format 1, which older files have).
Json progressToJson(const TrainingState& s) {
    const FitProgress& p = s.progress;
    const EpochProgress& e = p.epoch;
    Json j;
    j["loop"] = Json::parse(loopStateToJson(p.loop));
    j["epoch"] = {{"loss_sum", e.totals.loss_sum}, {"correct", e.totals.correct},   {"samples", e.totals.samples},
                  {"batches", e.totals.batches},   {"local_samples", e.local_samples},
                  {"skipped_steps", e.skipped_steps}, {"wait_ms", e.wait_ms}, {"train_time_s", e.train_time_s},
                  {"local_flops", e.local_flops}};
    j["fit"] = {{"train_s", p.fit.train_s},           {"samples", p.fit.samples},
                {"rank_samples", p.fit.rank_samples}, {"rank_train_s", p.fit.rank_train_s},
                {"rank_wait_s", p.fit.rank_wait_s},   {"best_val_accuracy", p.fit.best_val_accuracy},
                {"rank_flops", p.fit.rank_flops}};
    j["elapsed_s"] = p.elapsed_s;
    if (s.scaler) j["scaler"] = {{"scale", s.scaler->scale}, {"growth_tracker", s.scaler->growth_tracker}};
    j["callbacks"] = Json::parse(s.callbacks_json);
    return j;
}

void progressFromJson(const Json& j, TrainingState& s) {
    FitProgress& p = s.progress;
    p.loop = loopStateFromJson(j.at("loop").dump());
    const Json& e = j.at("epoch");
    p.epoch.totals.loss_sum = e.at("loss_sum").get<double>();
    p.epoch.totals.correct = e.at("correct").get<int64_t>();
    p.epoch.totals.samples = e.at("samples").get<int64_t>();
    p.epoch.totals.batches = e.at("batches").get<int64_t>();
    p.epoch.local_samples = e.at("local_samples").get<int64_t>();
    p.epoch.skipped_steps = e.at("skipped_steps").get<int64_t>();
    p.epoch.wait_ms = e.at("wait_ms").get<double>();
    p.epoch.train_time_s = e.at("train_time_s").get<double>();
    p.epoch.local_flops = e.value("local_flops", 0.0);   // states saved before FLOPs were counted lack it
    const Json& f = j.at("fit");
    p.fit.train_s = f.at("train_s").get<double>();
    p.fit.samples = f.at("samples").get<int64_t>();
    p.fit.rank_samples = f.at("rank_samples").get<int64_t>();
    p.fit.rank_train_s = f.at("rank_train_s").get<double>();
    p.fit.rank_wait_s = f.at("rank_wait_s").get<double>();
    p.fit.best_val_accuracy = f.at("best_val_accuracy").get<double>();
    p.fit.rank_flops = f.value("rank_flops", 0.0);
    p.elapsed_s = j.at("elapsed_s").get<double>();
    if (j.contains("scaler"))
        s.scaler = GradScalerState{j["scaler"].at("scale").get<double>(), j["scaler"].at("growth_tracker").get<int64_t>()};
    s.callbacks_json = j.at("callbacks").dump();
}

std::string readString(torch::serialize::InputArchive& archive, const char* key) {
    c10::IValue value;
    if (!archive.try_read(key, value) || !value.isString()) throw std::runtime_error(std::string("no '") + key + "'");
    return value.toStringRef();
}

int64_t readInt(torch::serialize::InputArchive& archive, const char* key) {
    c10::IValue value;
    if (!archive.try_read(key, value) || !value.isInt()) throw std::runtime_error(std::string("no '") + key + "'");
    return value.toInt();
}

// The first difference between two signatures, in words.
std::string signatureDifference(const std::string& file, const std::string& model) {
    auto split = [](const std::string& s) {
        std::vector<std::string> out;
        size_t start = 0;
        while (start < s.size()) {
            const size_t end = s.find(';', start);
            out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
            if (end == std::string::npos) break;
            start = end + 1;
        }
        return out;
    };
    const auto a = split(file), b = split(model);
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i >= a.size()) return "the model has " + b[i] + ", which the file lacks";
        if (i >= b.size()) return "the file has " + a[i] + ", which the model lacks";
        if (a[i] != b[i]) return "the file has " + a[i] + " where the model has " + b[i];
    }
    return "";
}

// Where the model lives: the state's tensors are read onto that device.
torch::Device modelDevice(const torch::nn::Module& model) {
    const auto params = model.parameters();
    return params.empty() ? torch::Device(torch::kCPU) : params.front().device();
}

// The optimizer's archive from its bytes, its tensors on `device` (next to the parameters).
void loadOptimizerOn(const torch::Tensor& bytes, torch::optim::Optimizer& optimizer, torch::Device device) {
    torch::serialize::InputArchive archive;
    readArchiveBytes(bytes, archive, device);
    optimizer.load(archive);
    moveStateToParameters(optimizer);   // where the parameters are not on `device` (offload)
}

void writeGenerators(torch::serialize::OutputArchive& archive, const TrainingState& state) {
    archive.write("cpu_rng", state.cpu_rng.defined() ? state.cpu_rng : cpuRngState());
    if (state.cuda_rng.defined()) archive.write("cuda_rng", state.cuda_rng);
}

// Generators as read: on the host, where a generator takes its state from.
void readGenerators(torch::serialize::InputArchive& archive, TrainingState& state) {
    torch::Tensor rng;
    archive.read("cpu_rng", rng);
    state.cpu_rng = rng.to(torch::kCPU);
    torch::Tensor cuda;
    if (archive.try_read("cuda_rng", cuda)) state.cuda_rng = cuda.to(torch::kCPU);
}

std::string rankKey(int64_t rank) {
    return "rank" + std::to_string(rank);
}

}  // namespace

void copyModelTensors(torch::serialize::InputArchive& archive, torch::nn::Module& module) {
    torch::NoGradGuard no_grad;
    for (auto& p : module.named_parameters(/*recurse=*/false)) {
        torch::Tensor t;
        archive.read(p.key(), t);
        if (t.sizes() != p.value().sizes()) throw std::runtime_error("'" + p.key() + "' has another shape");
        p.value().copy_(t);
    }
    for (auto& b : module.named_buffers(/*recurse=*/false)) {
        torch::Tensor t;
        archive.read(b.key(), t, /*is_buffer=*/true);
        if (t.sizes() != b.value().sizes()) throw std::runtime_error("'" + b.key() + "' has another shape");
        b.value().copy_(t);
    }
    for (const auto& child : module.named_children()) {
        if (!child.value()->is_serializable()) continue;
        torch::serialize::InputArchive child_archive;
        archive.read(child.key(), child_archive);
        copyModelTensors(child_archive, *child.value());
    }
}

torch::Tensor rankStatePart(const TrainingState& state, torch::optim::Optimizer* optimizer) {
    torch::serialize::OutputArchive part;
    part.write("progress", c10::IValue(progressToJson(state).dump()));
    writeGenerators(part, state);
    if (optimizer) part.write("optimizer", optimizerBytes(*optimizer));
    return archiveBytes(part);
}

std::string modelSignature(const torch::nn::Module& model) {
    std::string out;
    for (const auto& p : model.named_parameters()) out += p.key() + ":" + shapeText(p.value()) + ";";
    for (const auto& b : model.named_buffers()) out += b.key() + ":" + shapeText(b.value()) + ";";
    if (!out.empty()) out.pop_back();
    return out;
}

void saveTrainingState(const std::string& path, const TrainingState& state, const torch::nn::Module& model,
                       torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& rank_parts) {
    const std::string temporary = path + ".partial";
    const auto world_size = static_cast<int64_t>(std::max<size_t>(rank_parts.size(), 1));
    try {
        torch::serialize::OutputArchive archive;
        archive.write("magic", c10::IValue(std::string(kMagic)));
        archive.write("format", c10::IValue(std::max(state.format, world_size > 1 ? int64_t{2} : int64_t{1})));
        archive.write("signature", c10::IValue(modelSignature(model)));
        archive.write("progress", c10::IValue(progressToJson(state).dump()));
        torch::serialize::OutputArchive model_archive;
        model.save(model_archive);
        archive.write("model", model_archive);
        archive.write("optimizer", optimizerBytes(optimizer));
        writeGenerators(archive, state);
        if (world_size > 1) {
            archive.write("world_size", c10::IValue(world_size));
            for (int64_t r = 1; r < world_size; ++r) archive.write(rankKey(r), rank_parts[static_cast<size_t>(r)]);
        }
        archive.save_to(temporary);
    } catch (const std::exception& e) {
        std::remove(temporary.c_str());
        throw TrainingStateError("Cannot write the training state '" + path + "': " + e.what());
    }
    // On disk before it replaces the previous state: a power loss leaves one of the two whole.
    if (const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw TrainingStateError("Cannot write the training state '" + path + "': " + ec.message());
    }
}

TrainingState loadTrainingState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                                int64_t rank, int64_t world_size) {
    const torch::Device device = modelDevice(model);
    torch::serialize::InputArchive archive;
    std::string magic, signature, progress;
    TrainingState state;
    try {
        archive.load_from(path, device);
        magic = readString(archive, "magic");
        state.format = readInt(archive, "format");
        signature = readString(archive, "signature");
        progress = readString(archive, "progress");
    } catch (const std::exception&) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) throw TrainingStateError("There is no training state '" + path + "'.");
        throw TrainingStateError("'" + path + "' is not a Hearth training state, or it is damaged (it cannot be read).");
    }
    if (magic != kMagic)
        throw TrainingStateError("'" + path + "' is not a Hearth training state (it holds '" + magic + "').");
    if (state.format > kTrainingStateFormat)
        throw TrainingStateError("'" + path + "' was written by a newer Hearth (training state format " +
                                 std::to_string(state.format) + "; this Hearth reads up to " +
                                 std::to_string(kTrainingStateFormat) + "). Update Hearth to resume it.");
    const std::string expected = modelSignature(model);
    if (signature != expected)
        throw TrainingStateError("'" + path + "' belongs to another model: " + signatureDifference(signature, expected) +
                                 ".");
    c10::IValue world;
    const int64_t file_world = archive.try_read("world_size", world) && world.isInt() ? world.toInt() : 1;
    if (file_world != world_size)
        throw TrainingStateError("'" + path + "' was saved by a run of " + std::to_string(file_world) +
                                 " process(es); this one has " + std::to_string(world_size) +
                                 " (resume with the run's trainer.devices and trainer.num_nodes).");
    torch::Tensor optimizer_bytes;
    try {
        archive.read("optimizer", optimizer_bytes);
        if (rank == 0) {
            readGenerators(archive, state);
        } else {
            // This rank's own part: its progress and generators, and its optimizer share if any.
            torch::Tensor bytes;
            archive.read(rankKey(rank), bytes);
            torch::serialize::InputArchive part;
            readArchiveBytes(bytes, part, device);
            progress = readString(part, "progress");
            readGenerators(part, state);
            torch::Tensor own;
            if (part.try_read("optimizer", own)) optimizer_bytes = own;
        }
        progressFromJson(Json::parse(progress), state);
    } catch (const std::exception& e) {
        throw TrainingStateError("'" + path + "' is damaged: " + e.what() + ".");
    }
    // Everything checked: now change the model and the optimizer (a copy first, so that a
    // failure half-way leaves them as they were).
    std::vector<torch::Tensor> before;
    {
        torch::NoGradGuard no_grad;
        for (const auto& t : model.parameters()) before.push_back(t.detach().clone());
        for (const auto& t : model.buffers()) before.push_back(t.detach().clone());
    }
    const torch::Tensor optimizer_before = optimizerBytes(optimizer);
    try {
        torch::serialize::InputArchive model_archive;
        archive.read("model", model_archive);
        copyModelTensors(model_archive, model);
        loadOptimizerOn(optimizer_bytes, optimizer, device);
    } catch (const std::exception& e) {
        torch::NoGradGuard no_grad;
        size_t i = 0;
        for (auto& t : model.parameters()) t.copy_(before[i++]);
        for (auto& t : model.buffers()) t.copy_(before[i++]);
        loadOptimizerOn(optimizer_before, optimizer, device);
        throw TrainingStateError("'" + path + "' is damaged: " + e.what() + ".");
    }
    return state;
}

TrainingState resumeTrainingState(const std::string& path, torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer, Strategy& strategy) {
    std::optional<TrainingState> loaded;
    std::string problem;
    try {
        const WeightsAccess weights(strategy, /*writes=*/true);
        loaded = loadTrainingState(path, model, optimizer, strategy.rank(), strategy.worldSize());
        if (loaded->scaler.has_value() != strategy.precision().scalesLoss())
            problem = "'" + path + "' was written with another precision than this run's (" +
                      strategy.precision().name() + ").";
    } catch (const TrainingStateError& e) {
        problem = e.what();
    }
    // Every rank goes on, or none: a rank that could not read its part stops them all here rather
    // than leaving the others in the first collective of the fit.
    if (strategy.agreeToStop(!problem.empty()) && problem.empty())
        problem = "another rank could not resume from '" + path + "' (its log says why).";
    if (!problem.empty()) throw TrainingStateError(problem);
    strategy.weightsReplaced();
    return std::move(*loaded);
}

void saveTrainingStateAcrossRanks(const std::string& path, const TrainingState& state, const torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer, Strategy& strategy) {
    const WeightsAccess weights(strategy, /*writes=*/false);
    if (strategy.worldSize() == 1) {
        if (!path.empty()) saveTrainingState(path, state, model, optimizer);
        return;
    }
    const auto parts = strategy.gatherRows(rankStatePart(state, strategy.shardsOptimizer() ? &optimizer : nullptr));
    if (!path.empty()) saveTrainingState(path, state, model, optimizer, parts);
}

}  // namespace hearth
