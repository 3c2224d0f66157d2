// One rank of the DDP tests: trains the blob MLP with trainer.strategy=ddp in the world the
// environment describes (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets them) and
// writes its final weights to argv[1] (and [held, total] optimizer elements to argv[1].share). Settings come from the environment:
//   DDP_STRATEGY ddp|zero1|zero2, DDP_CLIP (gradient_clip_val), DDP_FLOAT64 0|1, DDP_OPTIMIZER sgd|adam, DDP_BATCH (per rank), DDP_ACCUMULATE, DDP_FIND_UNUSED 0|1,
//   DDP_BUCKET_VIEW 0|1, DDP_DIE_AT_STEP (this rank exits abruptly at that optimizer step),
//   DDP_CHECKPOINT (the folder rank 0 writes best.pt to), DDP_DEVICE cpu|cuda, DDP_BACKEND gloo|nccl.
// With WORLD_SIZE unset it is the single-process reference (strategy auto).
#include "DdpTestSupport.h"

#include <cstdio>
#include <cstdlib>

using namespace hearth;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: ddp_rank_child OUT_WEIGHTS\n");
        return 2;
    }
    try {
        const auto settings = testing::DdpSettings::fromEnvironment();
        const auto run = testing::trainBlobs(settings);
        torch::save(run.weights, argv[1]);
        torch::save(run.share, std::string(argv[1]) + ".share");
        torch::save(run.predictions, std::string(argv[1]) + ".predictions");
        torch::save(run.losses, std::string(argv[1]) + ".losses");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rank failed: %s\n", e.what());
        return 4;
    }
}
