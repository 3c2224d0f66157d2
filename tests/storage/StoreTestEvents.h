#pragma once
// Realistic events for the store tests (what the engine sends for a small classification run).

#include "engine/events/Events.h"

#include <cmath>
#include <string>
#include <vector>

namespace hearth::testing {

inline RunStarted startedEvent(const std::string& name) {
    RunStarted s;
    s.run_name = name;
    s.config_json = R"({"name":")" + name + R"(","trainer":{"max_epochs":2,"precision":"32-true"}})";
    s.effective = {{"trainer.precision", "32-true"}, {"trainer.pin_memory", "n/a on CPU: no pinned memory"}};
    s.environment.hearth_version = "0.1.0";
    s.environment.git_revision = "abc1234";
    s.environment.libtorch_version = "1.13.1";
    s.environment.os = "Linux";
    s.environment.cpu = "Test CPU";
    s.environment.cpu_threads = 8;
    s.environment.intra_op_threads = 2;
    s.environment.devices = {"cpu"};
    s.device = "cpu";
    s.train_size = 900;
    s.val_size = 100;
    s.test_size = 120;
    s.batches_per_epoch = 15;
    s.max_epochs = 2;
    s.class_names = {"cat", "dog", "bird"};
    s.model_summary = {"Linear(784, 3)"};
    s.parameter_count = 2355;
    s.wall_time_s = 1700000000.5;
    return s;
}

inline StepMetrics stepEvent(int64_t i, int64_t batches_per_epoch = 1000) {
    StepMetrics m;
    m.epoch = i / batches_per_epoch;
    m.batch = i % batches_per_epoch + 1;
    m.batches_per_epoch = batches_per_epoch;
    m.global_step = i + 1;
    m.loss = 2.3 / (1.0 + 0.01 * static_cast<double>(i));
    m.accuracy = 1.0 - m.loss / 2.3;
    m.lr = 1e-3 * std::pow(0.999, static_cast<double>(i));
    m.loss_scale = 65536.0;
    m.samples_per_sec = 5000.0 + static_cast<double>(i % 17);
    m.step_time_ms = 12.5;
    m.data_wait_ms = 0.25 * static_cast<double>(i % 3);
    m.elapsed_s = 0.0125 * static_cast<double>(i);
    m.eta_s = 100.0 - m.elapsed_s;
    return m;
}

inline EpochMetrics epochEvent(int64_t epoch, double val_acc) {
    EpochMetrics e;
    e.epoch = epoch;
    e.global_step = (epoch + 1) * 15;
    e.train_loss = 1.0 / (epoch + 1);
    e.train_accuracy = 0.5 + 0.1 * static_cast<double>(epoch);
    e.val_loss = 0.9 / (epoch + 1);
    e.val_accuracy = val_acc;
    e.lr = 1e-3;
    e.epoch_time_s = 3.25;
    e.samples_per_sec = 4321.0;
    e.data_wait_share = 0.125;
    e.skipped_steps = epoch;
    e.is_best = true;
    e.breakdown.data_wait_ms = 0.5;
    e.breakdown.host_to_device_ms = 0.25;
    e.breakdown.forward_ms = 10.0 + static_cast<double>(epoch);
    e.breakdown.backward_ms = 20.0;
    e.breakdown.comm_wait_ms = 1.5;
    e.breakdown.optimizer_ms = 2.0;
    e.breakdown.sync_ms = 0.125;
    e.breakdown.step_ms = 35.0 + static_cast<double>(epoch);
    e.breakdown.profiled = 4;
    return e;
}

// Labels of a 3-class split with a known confusion pattern.
inline void splitLabels(std::vector<int64_t>& y_true, std::vector<int64_t>& y_pred, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        y_true.push_back(i % 3);
        y_pred.push_back(i % 7 == 0 ? (i + 1) % 3 : i % 3);
    }
}

inline EvalReport reportEvent(const std::string& split, int64_t n) {
    std::vector<int64_t> y_true, y_pred;
    splitLabels(y_true, y_pred, n);
    EvalReport r;
    r.split = split;
    r.loss = 0.4321;
    r.report = ClassificationReport::compute(y_true, y_pred, {"cat", "dog", "bird"});
    return r;
}

inline PredictionsReady predictionsEvent(const std::string& split, int64_t n) {
    std::vector<int64_t> y_true, y_pred;
    splitLabels(y_true, y_pred, n);
    PredictionsReady p;
    p.split = split;
    for (int64_t i = 0; i < n; ++i)
        p.predictions.push_back({i, y_true[i], y_pred[i], 0.5 + 0.5 * static_cast<double>(i % 10) / 10.0});
    return p;
}

inline RunFinished finishedEvent() {
    RunFinished f;
    f.status = "completed";
    f.train_time_s = 12.5;
    f.total_time_s = 13.75;
    f.best_val_accuracy = 0.875;
    f.test_accuracy = 0.85;
    f.test_loss = 0.4321;
    f.samples_per_sec = 4400.0;
    f.peak_memory_bytes = 123456789;
    f.epochs_completed = 2;
    f.global_steps = 30;
    f.memory.device = "cpu";
    f.memory.parameters_bytes = 1000;
    f.memory.gradients_bytes = 1000;
    f.memory.optimizer_state_bytes = 2000;
    f.memory.activations_bytes = 50000;
    f.memory.reserved_unused_bytes = 0;
    f.memory.other_bytes = 7000;
    f.memory.peak_bytes = 61000;
    return f;
}

// A stopped fit's end, as finishedEvent() otherwise.
inline RunFinished stoppedEvent() {
    RunFinished f = finishedEvent();
    f.status = "stopped";
    return f;
}

// A training state saved at `path`, in `epoch`.
inline CheckpointSaved stateSavedEvent(const std::string& path, int64_t epoch = 0) {
    CheckpointSaved saved;
    saved.kind = "state";
    saved.path = path;
    saved.epoch = epoch;
    return saved;
}

}  // namespace hearth::testing
