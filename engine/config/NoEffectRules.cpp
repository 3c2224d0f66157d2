// The rules of ConfigKey::no_effect, one per condition the form greys keys out for: "" where
// the key applies, else why it does nothing.
#include "engine/config/NoEffectRules.h"

#include <initializer_list>

namespace hearth {
namespace {

using Caps = DeviceCapabilities;


std::string onlyOptimizers(const ExperimentConfig& c, std::initializer_list<const char*> names, const char* what) {
    for (const char* n : names) {
        if (c.optimizer.name == n) return "";
    }
    return std::string(what) + " (optimizer.name is " + c.optimizer.name + ")";
}

std::string onlySchedules(const ExperimentConfig& c, std::initializer_list<const char*> names, const char* what) {
    for (const char* n : names) {
        if (c.scheduler.name == n) return "";
    }
    return std::string(what) + " (scheduler.name is " + c.scheduler.name + ")";
}

}  // namespace

std::string momentumRule(const ExperimentConfig& c, const Caps&) {
    return onlyOptimizers(c, {"sgd"}, "only sgd uses momentum");
}
std::string betasRule(const ExperimentConfig& c, const Caps&) {
    return onlyOptimizers(c, {"adam", "adamw"}, "only adam and adamw use betas");
}
std::string epsRule(const ExperimentConfig& c, const Caps&) {
    return c.optimizer.name == "sgd" ? "sgd adds no epsilon" : "";
}
std::string nesterovRule(const ExperimentConfig& c, const Caps&) {
    return onlyOptimizers(c, {"sgd"}, "only sgd has Nesterov momentum");
}
std::string amsgradRule(const ExperimentConfig& c, const Caps&) {
    return onlyOptimizers(c, {"adam", "adamw"}, "only adam and adamw have AMSGrad");
}
std::string implementationRule(const ExperimentConfig& c, const Caps&) {
    return onlyOptimizers(c, {"adam", "adamw", "sgd"}, "adagrad steps per parameter");
}
std::string stepScheduleRule(const ExperimentConfig& c, const Caps&) {
    return onlySchedules(c, {"step"}, "only the step schedule decays by epochs");
}
std::string warmupRule(const ExperimentConfig& c, const Caps&) {
    return onlySchedules(c, {"linear-warmup"}, "only linear-warmup warms up");
}
std::string finalLrRule(const ExperimentConfig& c, const Caps&) {
    return onlySchedules(c, {"cosine", "linear-warmup"}, "only cosine and linear-warmup end at a final rate");
}

std::string mlpRule(const ExperimentConfig& c, const Caps&) {
    return c.model.name == "mlp" ? "" : "only mlp has hidden layers (model.name is " + c.model.name + ")";
}
std::string cnnRule(const ExperimentConfig& c, const Caps&) {
    return c.model.name == "cnn" ? "" : "only cnn has convolutions (model.name is " + c.model.name + ")";
}
std::string convolutionalRule(const ExperimentConfig& c, const Caps&) {
    return c.model.name == "cnn" || isResNetName(c.model.name)
               ? ""
               : "only cnn and the resnets have convolutions (model.name is " + c.model.name + ")";
}
std::string pretrainedRule(const ExperimentConfig& c, const Caps&) {
    return isTransformerName(c.model.name) || isResNetName(c.model.name)
               ? ""
               : "only distilbert, bert and the resnets load a checkpoint (model.name is " + c.model.name + ")";
}
std::string newTransformerRule(const ExperimentConfig& c, const Caps&) {
    if (!isTransformerName(c.model.name))
        return "only a new distilbert or bert is built to these sizes (model.name is " + c.model.name + ")";
    return c.model.pretrained ? "a pretrained model's sizes come from its config.json" : "";
}
std::string torchscriptRule(const ExperimentConfig& c, const Caps&) {
    return c.model.name == "torchscript" ? "" : "only model.name=torchscript reads a module file";
}
std::string inplaceRule(const ExperimentConfig& c, const Caps&) {
    if (c.model.name == "torchscript") return "a TorchScript model runs as it was written";
    return isTransformerName(c.model.name) ? "a transformer's GELU has no in-place form" : "";
}
std::string dropoutRule(const ExperimentConfig& c, const Caps&) {
    if (c.model.name == "torchscript") return "a TorchScript model keeps the dropout it was written with";
    if (isResNetName(c.model.name)) return "torchvision's ResNets have no dropout";
    return isTransformerName(c.model.name) && c.model.pretrained
               ? "a pretrained transformer keeps its config.json's dropout"
               : "";
}

std::string textDataRule(const ExperimentConfig& c, const Caps&) {
    return isTextKind(c.data.kind) ? "" : "applies to text data (data.kind is " + c.data.kind + ")";
}
std::string imageDataRule(const ExperimentConfig& c, const Caps&) {
    return isImageKind(c.data.kind) ? "" : "applies to images (data.kind is " + c.data.kind + ")";
}
std::string imageFolderRule(const ExperimentConfig& c, const Caps&) {
    return c.data.kind == "image_folder" ? "" : "applies to image folders (data.kind is " + c.data.kind + ")";
}
std::string fixedSizeDataRule(const ExperimentConfig& c, const Caps&) {
    return isTextKind(c.data.kind) ? "text batches are padded per batch on the host (data.kind is " + c.data.kind + ")"
                                   : "";
}
std::string textCsvRule(const ExperimentConfig& c, const Caps&) {
    return c.data.kind == "text_csv" ? "" : "only text_csv data has a text column (data.kind is " + c.data.kind + ")";
}
std::string csvFilesRule(const ExperimentConfig& c, const Caps&) {
    return c.data.kind == "csv" || c.data.kind == "text_csv"
               ? ""
               : "applies to csv and text_csv data (data.kind is " + c.data.kind + ")";
}
std::string testFractionRule(const ExperimentConfig& c, const Caps&) {
    if (c.data.kind == "idx") return "IDX data is tested on its official t10k files";
    if (c.data.kind != "csv" && c.data.kind != "image_folder" && !isTextKind(c.data.kind))
        return "applies to csv, text and image-folder data (data.kind is " + c.data.kind + ")";
    return c.data.test_path ? "data.test_path names the test file" : "";
}

std::string workersRule(const ExperimentConfig& c, const Caps&) {
    return c.trainer.num_workers > 0 ? "" : "there are no loader workers (trainer.num_workers is 0)";
}
std::string cudaRule(const ExperimentConfig& c, const Caps& caps) {
    return trainsOnCuda(c.trainer, caps) ? "" : "CUDA only, and this run trains on the CPU";
}
bool shardsOptimizerState(const std::string& strategy) {
    return strategy == "zero1" || strategy == "zero2" || strategy == "zero3";
}

// trainer.fsdp.*: zero3's units.
std::string fsdpRule(const ExperimentConfig& c, const Caps& caps) {
    const std::string strategy = resolveTrainer(c.trainer, caps).strategy;
    return strategy == "zero3" ? "" : "only zero3 gathers parameters by block (trainer.strategy is " + strategy + ")";
}
// trainer.pipeline.*: the pipeline's stages.
std::string pipelineRule(const ExperimentConfig& c, const Caps& caps) {
    const std::string strategy = resolveTrainer(c.trainer, caps).strategy;
    return strategy == "pipeline" ? "" : "only the pipeline strategy cuts the model (trainer.strategy is " + strategy + ")";
}
// trainer.offload_optimizer: a sharded optimizer (validation refuses it otherwise), kept off a device.
std::string offloadRule(const ExperimentConfig& c, const Caps& caps) {
    const std::string strategy = resolveTrainer(c.trainer, caps).strategy;
    if (!shardsOptimizerState(strategy))
        return "only a sharded optimizer is offloaded (trainer.strategy zero1, zero2 or zero3; it is " + strategy + ")";
    return trainsOnCuda(c.trainer, caps) ? "" : "a CPU run's optimizer is in host memory already: no device memory to save";
}
// The distributed keys, for the strategy "auto" resolves to (ddp with several processes).
std::string distributedRule(const ExperimentConfig& c, const Caps& caps) {
    return resolveTrainer(c.trainer, caps).strategy == "auto"
               ? "one process: there is nothing to synchronise (trainer.strategy auto with one device)"
               : "";
}
// DDP's reducer (its buckets, its unused-parameter search, gradients as bucket views): ddp and zero1.
std::string reducerRule(const ExperimentConfig& c, const Caps& caps) {
    if (std::string why = distributedRule(c, caps); !why.empty()) return why;
    const std::string strategy = resolveTrainer(c.trainer, caps).strategy;
    if (strategy == "zero2") return "ZeRO-2 shards gradients itself; DDP's buckets are not used";
    if (strategy == "zero3") return "ZeRO-3 shards gradients itself; DDP's buckets are not used";
    if (strategy == "pipeline") return "the pipeline's stages hold different parameters; DDP's buckets are not used";
    return "";
}
// The gradient buckets' size: DDP's Reducer (ddp, zero1) and zero2's reduces onto the owners.
std::string bucketRule(const ExperimentConfig& c, const Caps& caps) {
    return resolveTrainer(c.trainer, caps).strategy == "zero2" ? "" : reducerRule(c, caps);
}

}  // namespace hearth
