// hearth_bench_train: trains an MLP or CNN on Fashion-MNIST through Hearth's engine (the same
// runExperiment the GUI and CLI use) and prints the training throughput as one JSON object.
// Its plain PyTorch counterpart is bench/plain_torch_loop.py (compare_train_throughput.sh runs both).

#include "engine/config/ExperimentConfig.h"
#include "engine/run/RunController.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <iostream>

namespace {

// Keeps the numbers the benchmark reports.
class ThroughputSink final : public hearth::EventSink {
public:
    void onEvent(const hearth::Event& event) override {
        if (const auto* s = std::get_if<hearth::RunStarted>(&event)) {
            started = *s;
        } else if (const auto* f = std::get_if<hearth::RunFinished>(&event)) {
            finished = *f;
        } else if (const auto* e = std::get_if<hearth::EpochMetrics>(&event)) {
            epoch_rates.push_back(e->samples_per_sec);
            wait_shares.push_back(e->data_wait_share);
        } else if (const auto* x = std::get_if<hearth::RunFailed>(&event)) {
            failure = x->message;
        }
    }
    hearth::RunStarted started;
    hearth::RunFinished finished;
    std::vector<double> epoch_rates;
    std::vector<double> wait_shares;
    std::string failure;
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Hearth training throughput on Fashion-MNIST"};
    std::string model = "mlp", precision = "32-true", data = hearth::kDefaultFashionMnistPath;
    int64_t batch = 64, threads = 2, epochs = 1, limit = 0, workers = 0;
    uint64_t seed = 42;
    app.add_option("--model", model, "mlp | cnn")->check(CLI::IsMember({"mlp", "cnn"}));
    app.add_option("--batch-size", batch);
    app.add_option("--threads", threads, "intra-op threads (torch.set_num_threads)");
    app.add_option("--epochs", epochs);
    app.add_option("--limit", limit, "training samples (0 = all 55,000)");
    app.add_option("--workers", workers, "loader worker threads");
    app.add_option("--precision", precision);
    app.add_option("--data", data);
    app.add_option("--seed", seed);
    CLI11_PARSE(app, argc, argv);

    hearth::ExperimentConfig config;
    config.name = "bench-" + model;
    config.seed = seed;
    config.data.path = data;
    if (limit > 0) {
        config.data.limit = limit;
    }
    config.model.name = model;
    config.optimizer.name = "adam";
    config.optimizer.lr = 1e-3;
    config.trainer.max_epochs = epochs;
    config.trainer.batch_size = batch;
    config.trainer.num_threads = threads;
    config.trainer.num_workers = workers;
    config.trainer.pin_memory = false;
    config.trainer.precision = precision;
    config.trainer.log_every_n_steps = 50;

    ThroughputSink sink;
    std::atomic<bool> stop{false};
    const auto outcome = hearth::runExperiment(config, hearth::RunOptions{}, sink, stop);
    if (outcome.status != hearth::RunStatus::Completed) {
        std::cerr << "hearth_bench_train: run failed: " << sink.failure << "\n";
        return 1;
    }
    nlohmann::json out;
    out["engine"] = "hearth";
    out["model"] = model;
    out["precision"] = precision;
    out["batch_size"] = batch;
    out["threads"] = threads;
    out["workers"] = workers;
    out["epochs"] = epochs;
    out["train_samples"] = sink.started.train_size;
    out["parameters"] = sink.started.parameter_count;
    out["libtorch"] = sink.started.environment.libtorch_version;
    out["cpu"] = sink.started.environment.cpu;
    out["samples_per_sec"] = sink.finished.samples_per_sec;
    out["epoch_samples_per_sec"] = sink.epoch_rates;
    out["epoch_data_wait_share"] = sink.wait_shares;
    out["train_time_s"] = sink.finished.train_time_s;
    out["test_accuracy"] = sink.finished.test_accuracy;
    std::cout << out.dump() << std::endl;
    return 0;
}
