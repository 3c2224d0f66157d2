#include "engine/strategy/CheckpointFile.h"

namespace hearth {

void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer) {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write("model", model_archive);
    if (optimizer) {
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

}  // namespace hearth
