#include "engine/strategy/CheckpointFile.h"

#include "engine/optim/Optimizers.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace hearth {

namespace {

std::string shardKey(size_t rank) {
    return "rank" + std::to_string(rank);
}

}  // namespace

void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                        const OptimizerShards* shards) {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write("model", model_archive);
    if (shards) {
        torch::serialize::OutputArchive all;
        all.write("world_size", c10::IValue(static_cast<int64_t>(shards->states.size())));
        all.write("strategy", c10::IValue(shards->strategy));
        for (size_t r = 0; r < shards->states.size(); ++r) {
            torch::serialize::OutputArchive one;
            one.write("state", shards->states[r]);
            one.write("numels", shards->numels[r]);
            all.write(shardKey(r), one);
        }
        archive.write("optimizer_shards", all);
    } else if (optimizer) {
        torch::serialize::OutputArchive optimizer_archive;
        optimizer->save(optimizer_archive);
        archive.write("optimizer", optimizer_archive);
    }
    archive.save_to(path);
}

void loadCheckpointFile(const std::string& path, torch::nn::Module& model) {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
}

torch::Tensor archiveBytes(torch::serialize::OutputArchive& archive) {
    size_t total = 0;
    archive.save_to([&total](const void*, size_t n) {
        total += n;
        return n;
    });
    auto t = torch::empty({static_cast<int64_t>(total)}, torch::kUInt8);
    auto* data = reinterpret_cast<char*>(t.data_ptr<uint8_t>());
    size_t written = 0;
    archive.save_to([&](const void* bytes, size_t n) {
        if (written + n <= total) std::memcpy(data + written, bytes, n);
        written += n;
        return n;
    });
    // The same archive serialises to the same length (the writer's id has a fixed width): a
    // difference is a LibTorch whose writer does not, and must not pass as a state.
    if (written != total)
        throw std::logic_error("serialising an archive gave " + std::to_string(written) + " bytes after " +
                               std::to_string(total) + " on a first pass");
    return t;
}

void readArchiveBytes(const torch::Tensor& bytes, torch::serialize::InputArchive& archive, torch::Device device) {
    const auto host = bytes.to(torch::kCPU).contiguous();
    // Read in place (a string and a string stream over it were two more copies).
    archive.load_from(reinterpret_cast<const char*>(host.data_ptr<uint8_t>()), static_cast<size_t>(host.numel()),
                      device);
}

torch::Tensor optimizerBytes(torch::optim::Optimizer& optimizer) {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    return archiveBytes(archive);
}

void loadOptimizerBytes(const torch::Tensor& bytes, torch::optim::Optimizer& optimizer) {
    torch::serialize::InputArchive archive;
    readArchiveBytes(bytes, archive);
    optimizer.load(archive);
    moveStateToParameters(optimizer);   // read on the host; a shard's parameters may be on a GPU
}

OptimizerShards readOptimizerShards(const std::string& path) {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive all;
    if (!archive.try_read("optimizer_shards", all)) {
        throw std::runtime_error(path + " has no sharded optimizer state (written by one process or by ddp)");
    }
    c10::IValue world;
    c10::IValue strategy;
    all.read("world_size", world);
    all.read("strategy", strategy);
    OptimizerShards shards;
    shards.strategy = strategy.toStringRef();
    for (int64_t r = 0; r < world.toInt(); ++r) {
        torch::serialize::InputArchive one;
        all.read(shardKey(static_cast<size_t>(r)), one);
        torch::Tensor state;
        torch::Tensor numels;
        one.read("state", state);
        one.read("numels", numels);
        shards.states.push_back(state);
        shards.numels.push_back(numels);
    }
    return shards;
}

}  // namespace hearth
