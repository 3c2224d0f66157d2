#pragma once
// The checkpoint file format: one LibTorch archive with the parts
//   "model"             the model's parameters and buffers;
//   "optimizer"         the optimizer state (one process, ddp);
//   "optimizer_shards"  instead, where each rank holds a share of it (zero1, zero2): "world_size",
//                       "strategy", and per rank "rank<r>/state" (that rank's optimizer archive,
//                       as bytes) and "rank<r>/numels" (the elements of the parameters it covers,
//                       in its order), so a run of the same world size can take its shard back.
// Strategies write and read checkpoints through these.

#include <torch/torch.h>

#include <string>
#include <vector>

namespace hearth {

// Every rank's serialised optimizer, in rank order.
struct OptimizerShards {
    std::string strategy;                 // zero1 | zero2
    std::vector<torch::Tensor> states;    // uint8: the rank's optimizer archive
    std::vector<torch::Tensor> numels;    // int64: elements of each parameter that optimizer covers
};

void saveCheckpointFile(const std::string& path, const torch::nn::Module& model, torch::optim::Optimizer* optimizer,
                        const OptimizerShards* shards = nullptr);
// Loads the "model" part of a file written by saveCheckpointFile into `model`.
void loadCheckpointFile(const std::string& path, torch::nn::Module& model);

// An archive as bytes (uint8, on the host), and back (its tensors read onto `device`). Written
// straight into the tensor (a first pass counts the bytes): a rank sending its optimizer share
// holds one copy of it, where a string stream, its string and the tensor held up to four; read
// in place.
torch::Tensor archiveBytes(torch::serialize::OutputArchive& archive);
void readArchiveBytes(const torch::Tensor& bytes, torch::serialize::InputArchive& archive,
                      torch::Device device = torch::kCPU);

// An optimizer's archive as bytes, and back (throws std::runtime_error naming what is wrong).
torch::Tensor optimizerBytes(torch::optim::Optimizer& optimizer);
void loadOptimizerBytes(const torch::Tensor& bytes, torch::optim::Optimizer& optimizer);
// The "optimizer_shards" part; throws std::runtime_error when the file has none.
OptimizerShards readOptimizerShards(const std::string& path);

}  // namespace hearth
