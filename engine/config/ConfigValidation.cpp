// validate(): range and consistency checks of an ExperimentConfig against what the machine can do.
// Every message names what is wrong and what is allowed; the CLI and the GUI show the same text.
#include "engine/config/ExperimentConfig.h"

#include <algorithm>
#include <sstream>

namespace hearth {
namespace {

class Checker {
public:
    explicit Checker(std::vector<ConfigIssue>& issues) : issues_(issues) {}

    void fail(const std::string& key, const std::string& message) { issues_.push_back({key, message}); }

    void oneOf(const std::string& key, const std::string& value, std::initializer_list<const char*> allowed) {
        for (const char* a : allowed)
            if (value == a) return;
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        fail(key, "'" + value + "' is not one of: " + list);
    }
    void atLeast(const std::string& key, int64_t value, int64_t min) {
        if (value < min) fail(key, "must be at least " + std::to_string(min) + ", got " + std::to_string(value));
    }
    // lo <= value < hi (or <= hi when closed).
    void inRange(const std::string& key, double value, double lo, double hi, bool hi_closed, const char* what) {
        const bool ok = value >= lo && (hi_closed ? value <= hi : value < hi);
        if (!ok) fail(key, std::string("must be ") + what + ", got " + number(value));
    }
    void positive(const std::string& key, double value) {
        if (!(value > 0.0)) fail(key, "must be greater than 0, got " + number(value));
    }
    static std::string number(double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    }

private:
    std::vector<ConfigIssue>& issues_;
};

void checkData(const DataConfig& d, Checker& c) {
    c.oneOf("data.kind", d.kind, {"idx", "csv"});
    if (d.path.empty()) c.fail("data.path", "must name a folder (idx) or a file (csv)");
    c.inRange("data.val_fraction", d.val_fraction, 0.0, 1.0, false, "in [0, 1)");
    if (d.kind == "csv") {
        if (!d.test_path) c.inRange("data.test_fraction", d.test_fraction, 0.0, 1.0, false, "in [0, 1)");
        const double held_out = (d.val_path ? 0.0 : d.val_fraction) + (d.test_path ? 0.0 : d.test_fraction);
        if (held_out >= 1.0)
            c.fail("data.val_fraction", "val_fraction + test_fraction must leave rows for training (sum is " +
                                            Checker::number(held_out) + ")");
        if (d.label_column.empty()) c.fail("data.label_column", "must name the CSV column that holds the label");
    } else if (d.kind == "idx" && (d.val_path || d.test_path)) {
        c.fail(d.val_path ? "data.val_path" : "data.test_path",
               "applies to csv data only; IDX data uses the official t10k test files and data.val_fraction");
    }
    if (d.limit && *d.limit < 1) c.fail("data.limit", "must be at least 1 (or null for all samples)");
}

void checkModel(const ExperimentConfig& cfg, Checker& c) {
    const ModelConfig& m = cfg.model;
    c.oneOf("model.name", m.name, {"mlp", "cnn"});
    if (m.name == "mlp") {
        for (int64_t h : m.hidden) c.atLeast("model.hidden", h, 1);
    }
    if (m.name == "cnn") {
        if (m.channels.empty() || m.channels.size() > 4)
            c.fail("model.channels", "a cnn needs 1 to 4 convolution blocks, got " + std::to_string(m.channels.size()));
        for (int64_t ch : m.channels) c.atLeast("model.channels", ch, 1);
        if (cfg.data.kind == "csv")
            c.fail("model.name", "cnn needs image input but data.kind is csv (tabular rows); use mlp");
    }
    c.inRange("model.dropout", m.dropout, 0.0, 1.0, false, "in [0, 1)");
}

void checkOptimization(const ExperimentConfig& cfg, Checker& c) {
    const OptimizerConfig& o = cfg.optimizer;
    c.oneOf("optimizer.name", o.name, {"sgd", "adam", "adamw", "adagrad"});
    c.positive("optimizer.lr", o.lr);
    if (o.weight_decay < 0) c.fail("optimizer.weight_decay", "must be 0 or more, got " + Checker::number(o.weight_decay));
    c.inRange("optimizer.momentum", o.momentum, 0.0, 1.0, false, "in [0, 1)");
    c.inRange("optimizer.beta1", o.beta1, 0.0, 1.0, false, "in [0, 1)");
    c.inRange("optimizer.beta2", o.beta2, 0.0, 1.0, false, "in [0, 1)");
    c.positive("optimizer.eps", o.eps);

    const SchedulerConfig& s = cfg.scheduler;
    c.oneOf("scheduler.name", s.name, {"none", "step", "cosine", "linear-warmup"});
    c.atLeast("scheduler.step_size", s.step_size, 1);
    c.inRange("scheduler.gamma", s.gamma, 1e-12, 1.0, true, "in (0, 1]");
    c.atLeast("scheduler.warmup_steps", s.warmup_steps, 0);
    if (s.min_lr < 0 || s.min_lr > o.lr)
        c.fail("scheduler.min_lr", "must be between 0 and optimizer.lr (" + Checker::number(o.lr) + "), got " +
                                       Checker::number(s.min_lr));
}

void checkTrainer(const ExperimentConfig& cfg, Checker& c) {
    const TrainerConfig& t = cfg.trainer;
    c.atLeast("trainer.max_epochs", t.max_epochs, 1);
    c.atLeast("trainer.batch_size", t.batch_size, 1);
    c.oneOf("trainer.precision", t.precision, {"32-true", "16-mixed", "bf16-mixed"});
    c.atLeast("trainer.accumulate_grad_batches", t.accumulate_grad_batches, 1);
    c.oneOf("trainer.accelerator", t.accelerator, {"auto", "cpu", "cuda"});
    c.atLeast("trainer.devices", t.devices, 1);
    c.oneOf("trainer.strategy", t.strategy, {"auto", "ddp", "zero1", "zero2"});
    c.atLeast("trainer.num_workers", t.num_workers, 0);
    c.atLeast("trainer.prefetch_factor", t.prefetch_factor, 1);
    if (t.persistent_workers && t.num_workers == 0)
        c.fail("trainer.persistent_workers", "needs trainer.num_workers > 0 (there are no worker threads to keep)");
    if (t.gradient_clip_val && !(*t.gradient_clip_val > 0))
        c.fail("trainer.gradient_clip_val", "must be greater than 0, or null for no clipping");
    c.atLeast("trainer.log_every_n_steps", t.log_every_n_steps, 1);
    c.atLeast("trainer.num_threads", t.num_threads, 0);
    c.oneOf("trainer.checkpoint.monitor", t.checkpoint.monitor, {"val_acc", "val_loss"});
    c.oneOf("trainer.checkpoint.mode", t.checkpoint.mode, {"max", "min"});
    if (t.channels_last && cfg.model.name != "cnn")
        c.fail("trainer.channels_last", "applies to convolutional models only (model.name=cnn)");
    if (t.deterministic && t.cudnn_benchmark)
        c.fail("trainer.cudnn_benchmark", "conflicts with trainer.deterministic=true (benchmarking picks "
                                          "kernels by timing, which is not reproducible)");
}

// Settings the hardware (or this build) cannot honour are refused before the run, with the reason.
void checkHardware(const TrainerConfig& t, const DeviceCapabilities& caps, Checker& c) {
    const bool on_cuda = t.accelerator == "cuda" || (t.accelerator == "auto" && caps.cuda_available);
    if (t.accelerator == "cuda" && !caps.cuda_available)
        c.fail("trainer.accelerator", "cuda was requested but this machine has no usable CUDA device "
                                      "(or LibTorch was built without CUDA); use auto or cpu");
    if (t.precision == "16-mixed" && !on_cuda && !caps.cpu_fp16_autocast)
        c.fail("trainer.precision", "16-mixed needs a CUDA device: this LibTorch has no float16 autocast on "
                                    "CPU; use bf16-mixed on CPU");
    if (t.precision == "bf16-mixed" && on_cuda && caps.cuda_available && !caps.cuda_bf16)
        c.fail("trainer.precision", "bf16-mixed needs a GPU with bfloat16 support (Ampere or newer); use 16-mixed");
    if (t.devices > 1) {
        if (!on_cuda)
            c.fail("trainer.devices", "more than one device needs CUDA GPUs; this run uses the CPU");
        else if (t.devices > caps.cuda_device_count)
            c.fail("trainer.devices", "asks for " + std::to_string(t.devices) + " GPUs but this machine has " +
                                          std::to_string(caps.cuda_device_count));
    }
    if (t.strategy != "auto")
        c.fail("trainer.strategy", "'" + t.strategy + "' (multi-device training) is not available in this "
                                   "version of Hearth yet; use auto (one device)");
    else if (t.devices > 1)
        c.fail("trainer.devices", "training on several devices needs a distributed strategy, which this "
                                  "version of Hearth does not have yet; use devices=1");
}

}  // namespace

std::vector<ConfigIssue> validate(const ExperimentConfig& config, const DeviceCapabilities& caps) {
    std::vector<ConfigIssue> issues;
    Checker c(issues);
    if (config.name.empty()) c.fail("name", "must not be empty (it names the run)");
    checkData(config.data, c);
    checkModel(config, c);
    checkOptimization(config, c);
    checkTrainer(config, c);
    checkHardware(config.trainer, caps, c);
    return issues;
}

}  // namespace hearth
