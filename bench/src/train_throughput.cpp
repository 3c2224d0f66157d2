// hearth_bench_train: trains an MLP or CNN on Fashion-MNIST, or a DistilBERT/BERT-shaped
// transformer on a text CSV, through Hearth's engine (the same runExperiment the GUI and CLI use)
// and prints the training throughput as one JSON object. Text: every sample is padded or cut to
// --seq tokens (data.padding=max_length), so batches have one shape; the counterpart is
// bench/transformers_step.py (bench/text_step_compare.sh runs both).
// Its plain PyTorch counterpart is bench/plain_torch_loop.py (compare_train_throughput.sh runs both),
// its Lightning counterpart bench/lightning_loop.py (bench/compare_gpu.sh runs all three on CUDA).

#include "engine/config/ExperimentConfig.h"
#include "engine/run/RunController.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <sstream>

namespace {

// Keeps the numbers the benchmark reports.
class ThroughputSink final : public hearth::EventSink {
public:
    explicit ThroughputSink(int64_t batch_size) : batch_size_(batch_size) {}

    void onEvent(const hearth::Event& event) override {
        if (const auto* s = std::get_if<hearth::RunStarted>(&event)) {
            started = *s;
        } else if (const auto* f = std::get_if<hearth::RunFinished>(&event)) {
            finished = *f;
        } else if (const auto* e = std::get_if<hearth::EpochMetrics>(&event)) {
            epoch_rates.push_back(e->samples_per_sec);
            wait_shares.push_back(e->data_wait_share);
        } else if (const auto* m = std::get_if<hearth::StepMetrics>(&event)) {
            addStep(*m);
        } else if (const auto* d = std::get_if<hearth::DeviceSample>(&event)) {
            auto& peak = d->device >= 0 ? cuda_peak_bytes : host_peak_bytes;
            peak = std::max(peak, d->peak_bytes);
        } else if (const auto* x = std::get_if<hearth::RunFailed>(&event)) {
            failure = x->message;
        }
    }

    // Training samples per second after warm-up: every logged interval except the first of each
    // epoch (epoch 0: the warm-up; later epochs: it also spans the previous epoch's validation).
    double steadySamplesPerSec() const { return steady_s_ > 0.0 ? steady_samples_ / steady_s_ : 0.0; }
    double steadySamples() const { return steady_samples_; }

    hearth::RunStarted started;
    hearth::RunFinished finished;
    std::vector<double> epoch_rates;
    std::vector<double> wait_shares;
    int64_t cuda_peak_bytes = 0;     // CUDA caching-allocator peak (samples with device >= 0)
    int64_t host_peak_bytes = 0;     // process peak RSS (samples with device -1)
    std::string failure;

private:
    void addStep(const hearth::StepMetrics& m) {
        const int64_t done = std::min(m.batch * batch_size_, started.train_size);
        const bool first_of_epoch = m.epoch != last_epoch_;
        const auto samples = static_cast<double>(done - (first_of_epoch ? 0 : last_done_));
        if (!first_of_epoch && samples > 0.0 && m.samples_per_sec > 0.0) {
            steady_samples_ += samples;
            steady_s_ += samples / m.samples_per_sec;   // samples_per_sec = interval samples / interval s
        }
        last_epoch_ = m.epoch;
        last_done_ = done;
    }

    int64_t batch_size_;
    int64_t last_epoch_ = -1;
    int64_t last_done_ = 0;
    double steady_samples_ = 0.0;
    double steady_s_ = 0.0;
};

std::vector<int64_t> parseWidths(const std::string& text) {
    std::vector<int64_t> widths;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        widths.push_back(std::stoll(item));
    }
    return widths;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Hearth training throughput on Fashion-MNIST"};
    std::string model = "mlp", precision = "32-true", accelerator = "auto", hidden = "256,128";
    std::string data = hearth::kDefaultFashionMnistPath;
    int64_t batch = 64, threads = 2, epochs = 1, limit = 0, workers = 0, warmup = 50;
    uint64_t seed = 42;
    bool pin_memory = false, on_device = false, cuda_graph = false;
    app.add_option("--model", model, "mlp | cnn | distilbert | bert")
        ->check(CLI::IsMember({"mlp", "cnn", "distilbert", "bert"}));
    std::string text_csv, vocab;
    int64_t seq = 128, dim = 768, layers = 6, heads = 12, ffn = 3072;
    app.add_option("--text-csv", text_csv, "transformers: a CSV with text,label columns");
    app.add_option("--vocab", vocab, "transformers: the WordPiece vocab.txt");
    app.add_option("--seq", seq, "transformers: tokens per sample");
    app.add_option("--dim", dim);
    app.add_option("--layers", layers);
    app.add_option("--heads", heads);
    app.add_option("--ffn", ffn);
    app.add_option("--hidden", hidden, "mlp hidden widths, comma-separated (default 256,128)");
    app.add_option("--batch-size", batch);
    app.add_option("--threads", threads, "intra-op threads (torch.set_num_threads)");
    app.add_option("--epochs", epochs);
    app.add_option("--limit", limit, "training samples (0 = all 55,000)");
    app.add_option("--workers", workers, "loader worker threads");
    app.add_flag("--pin-memory", pin_memory,
                 "pinned staging; on CUDA each next batch is copied on a copy stream during the step");
    app.add_flag("--on-device", on_device, "data.on_device: the training set held on the training device");
    app.add_flag("--cuda-graph", cuda_graph, "trainer.cuda_graph=step: the optimizer step captured and replayed");
    app.add_option("--precision", precision)->check(CLI::IsMember({"32-true", "16-mixed", "bf16-mixed"}));
    app.add_option("--accelerator", accelerator)->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--warmup-batches", warmup,
                   "batches left out of steady_samples_per_sec (also the metrics logging interval)");
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
    config.model.hidden = parseWidths(hidden);
    if (model == "distilbert" || model == "bert") {
        config.data.kind = "text_csv";
        config.data.path = text_csv;
        config.data.tokenizer = vocab;
        config.data.max_length = seq;
        config.data.padding = "max_length";
        config.data.val_fraction = 0.05;
        config.data.test_fraction = 0.05;
        config.model.hidden_size = dim;
        config.model.num_layers = layers;
        config.model.num_heads = heads;
        config.model.intermediate_size = ffn;
        config.model.dropout = 0.1;
    }
    config.optimizer.name = "adam";
    config.optimizer.lr = 1e-3;
    config.trainer.max_epochs = epochs;
    config.trainer.batch_size = batch;
    config.trainer.num_threads = threads;
    config.trainer.num_workers = workers;
    config.trainer.pin_memory = pin_memory;
    config.data.on_device = on_device;
    config.trainer.cuda_graph = cuda_graph ? "step" : "off";
    config.trainer.precision = precision;
    config.trainer.accelerator = accelerator;
    config.trainer.log_every_n_steps = std::max<int64_t>(warmup, 1);

    ThroughputSink sink(batch);
    std::atomic<bool> stop{false};
    const auto outcome = hearth::runExperiment(config, hearth::RunOptions{}, sink, stop);
    if (outcome.status != hearth::RunStatus::Completed) {
        std::cerr << "hearth_bench_train: run failed: " << sink.failure << "\n";
        return 1;
    }
    const bool on_cuda = sink.started.device.rfind("cuda", 0) == 0;
    nlohmann::json out;
    out["engine"] = "hearth";
    out["model"] = model;
    if (model == "mlp") {
        out["hidden"] = config.model.hidden;
    }
    if (config.data.kind == "text_csv") {
        out["seq"] = seq;
        out["dim"] = dim;
        out["layers"] = layers;
        out["heads"] = heads;
        out["ffn"] = ffn;
    }
    out["precision"] = precision;
    out["accelerator"] = accelerator;
    out["device"] = sink.started.device;
    out["batch_size"] = batch;
    out["threads"] = threads;
    out["workers"] = workers;
    out["pin_memory"] = pin_memory;
    out["on_device"] = on_device;
    out["cuda_graph"] = cuda_graph;
    out["epochs"] = epochs;
    out["warmup_batches"] = warmup;
    out["train_samples"] = sink.started.train_size;
    out["parameters"] = sink.started.parameter_count;
    out["libtorch"] = sink.started.environment.libtorch_version;
    out["cpu"] = sink.started.environment.cpu;
    out["samples_per_sec"] = sink.finished.samples_per_sec;
    // Too few batches for a steady interval: fall back to the whole-fit rate.
    out["steady_samples_per_sec"] =
        sink.steadySamples() > 0.0 ? sink.steadySamplesPerSec() : sink.finished.samples_per_sec;
    out["epoch_samples_per_sec"] = sink.epoch_rates;
    out["epoch_data_wait_share"] = sink.wait_shares;
    out["train_time_s"] = sink.finished.train_time_s;
    // Hearth's own model FLOPs per device and MFU over the whole fit (warm-up included; -1 unknown).
    out["tflops"] = sink.finished.tflops;
    out["mfu"] = sink.finished.mfu;
    out["test_accuracy"] = sink.finished.test_accuracy;
    out["peak_memory_kind"] = on_cuda ? "cuda_allocated" : "host_rss";
    out["peak_memory_bytes"] = on_cuda ? sink.cuda_peak_bytes : sink.host_peak_bytes;
    out["host_peak_rss_bytes"] = sink.host_peak_bytes;
    std::cout << out.dump() << std::endl;
    return 0;
}
