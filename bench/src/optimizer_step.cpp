// optimizer_step: the optimizer step alone, per kernel (optimizer.implementation), on the
// parameters of Hearth's built-in models: the default CNN (Fashion-MNIST), the default MLP and a
// DistilBERT-sized transformer (66 M parameters in about 100 tensors). Each repeat times `steps`
// steps after a warm-up; prints the median of the repeats with their min-max, per kernel, and
// each kernel's speed against per_parameter.
// Usage: optimizer_step [--device cpu|cuda] [--optimizer adamw] [--repeats 5] [--steps 50]
//                       [--model cnn|mlp|distilbert|all] [--threads 2]
#include "engine/TorchCompat.h"
#include "engine/models/ModelRegistry.h"
#include "engine/optim/Optimizers.h"

#include "BenchSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace hearth;

namespace {

std::shared_ptr<ClassifierImpl> model(const std::string& name) {
    ModelConfig c;
    c.name = name;
    if (name == "distilbert") {
        // DistilBERT base's sizes (vocabulary 30522, 6 layers, hidden 768) without a checkpoint.
        c.hidden_size = 768;
        c.num_layers = 6;
        c.num_heads = 12;
        c.intermediate_size = 3072;
        return createModel(c, ModelInput{{512}, 2, 30522, 512, 0});
    }
    return createModel(c, ModelInput{{1, 28, 28}, 10});
}

void sync(const torch::Device& device) {
    if (device.is_cuda()) torch::cuda::synchronize();
}

}  // namespace

int main(int argc, char** argv) {
    std::string device_name = "cpu", optimizer = "adamw", which = "all";
    int repeats = 5, steps = 50, threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--device") device_name = argv[i + 1];
        else if (flag == "--optimizer") optimizer = argv[i + 1];
        else if (flag == "--repeats") repeats = std::atoi(argv[i + 1]);
        else if (flag == "--steps") steps = std::atoi(argv[i + 1]);
        else if (flag == "--model") which = argv[i + 1];
        else if (flag == "--threads") threads = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
    torch::set_num_threads(threads);
    std::vector<OptimizerKernel> kernels{OptimizerKernel::PerParameter, OptimizerKernel::Foreach};
    if (compat::kFusedOptimizers) kernels.push_back(OptimizerKernel::Fused);
    std::printf("LibTorch %d.%d, %s, %s, %d repeats of %d steps, %d threads\n", TORCH_VERSION_MAJOR,
                TORCH_VERSION_MINOR, device.str().c_str(), optimizer.c_str(), repeats, steps,
                torch::get_num_threads());
    for (const std::string name : {"cnn", "mlp", "distilbert"}) {
        if (which != "all" && which != name) continue;
        auto m = model(name);
        m->to(device);
        auto params = m->parameters();
        int64_t numel = 0;
        for (const auto& p : params) numel += p.numel();
        std::printf("%s: %zu tensors, %.2f M parameters\n", name.c_str(), params.size(), numel / 1e6);
        double per_parameter_ms = 0.0;
        for (const auto kernel : kernels) {
            OptimizerConfig c;
            c.name = optimizer;
            c.weight_decay = 0.01;
            c.implementation = optimizerKernelName(kernel);
            auto opt = createOptimizer(c, params);
            for (auto& p : params) p.mutable_grad() = torch::randn_like(p) * 1e-3;
            for (int w = 0; w < 3; ++w) opt->step();
            std::vector<double> ms;
            for (int r = 0; r < repeats; ++r) {
                sync(device);
                const auto start = std::chrono::steady_clock::now();
                for (int s = 0; s < steps; ++s) opt->step();
                sync(device);
                ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                             steps);
            }
            const double median = bench::percentile(ms, 0.5);
            if (kernel == OptimizerKernel::PerParameter) per_parameter_ms = median;
            std::printf("  %-14s %8.3f ms/step (min %.3f, max %.3f)  %.2fx per_parameter\n", optimizerKernelName(kernel),
                        median, *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()),
                        per_parameter_ms / median);
        }
    }
    return 0;
}
