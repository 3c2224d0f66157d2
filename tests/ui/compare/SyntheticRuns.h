#pragma once
// Runs written straight through RunWriter (no training): many of them, with long curves, for the
// Compare tab's tests at scale. Run i has lr 1e-4 .. 1e-1 (log-spaced), optimizer adam or sgd
// (alternating), belongs to sweep "lr-a" (first half) or "lr-b", and its loss curve is
// (1 + i) / (1 + step / 100): the curves never cross, so each can be pointed at. Run 3 has a
// name too long for any label; with `spikeStep` run 0's loss jumps to 1000 at that step.
#include "engine/config/ExperimentConfig.h"
#include "storage/RunWriter.h"

#include <cmath>
#include <string>
#include <vector>

namespace hearth::test {

struct SyntheticRun {
    int64_t id = 0;
    double lr = 0.0;
    std::string optimizer;
    double testAccuracy = 0.0;
    double trainTime = 0.0;
};

inline double syntheticLr(int i, int n) { return std::pow(10.0, -4.0 + 3.0 * i / std::max(1, n - 1)); }

inline std::vector<SyntheticRun> writeSyntheticRuns(const std::string& db, int n, int steps, int spikeStep = -1)
{
    hearth::RunWriter writer(db);
    const int64_t sweepA = writer.createSweep("lr-a", "grid");
    const int64_t sweepB = writer.createSweep("lr-b", "grid");
    std::vector<SyntheticRun> runs;
    for (int i = 0; i < n; ++i) {
        hearth::ExperimentConfig config;
        config.name = "synthetic-" + std::to_string(i);
        if (i == 3)
            config.name += "-with-a-name-far-too-long-to-fit-beside-any-bar-in-the-chart";
        config.optimizer.lr = syntheticLr(i, n);
        config.optimizer.name = i % 2 == 0 ? "adam" : "sgd";
        SyntheticRun run;
        run.id = writer.createRun(config.name, hearth::configToJson(config), i < n / 2 ? sweepA : sweepB);
        run.lr = config.optimizer.lr;
        run.optimizer = config.optimizer.name;
        run.testAccuracy = 0.5 + 0.4 * std::fmod(i * 0.618034, 1.0);   // not in run order
        run.trainTime = 10.0 + (i * 37) % 50;
        for (int s = 0; s < steps; ++s) {
            hearth::StepMetrics m;
            m.epoch = s / 1000;
            m.batch = s % 1000 + 1;
            m.batches_per_epoch = 1000;
            m.global_step = s + 1;
            m.loss = i == 0 && s == spikeStep ? 1000.0 : (1.0 + i) / (1.0 + s / 100.0);
            m.lr = run.lr;
            m.samples_per_sec = 1000.0 + i;
            m.elapsed_s = 0.01 * s;
            writer.enqueue(run.id, m);
        }
        hearth::EpochMetrics e;
        e.global_step = steps;
        e.val_loss = 1.0 / (1.0 + i);
        e.val_accuracy = run.testAccuracy;
        e.epoch_time_s = run.trainTime;
        writer.enqueue(run.id, e);
        hearth::RunFinished f;
        f.status = "completed";
        f.train_time_s = run.trainTime;
        f.total_time_s = run.trainTime + 1.0;
        f.best_val_accuracy = run.testAccuracy;
        f.test_accuracy = run.testAccuracy;
        f.samples_per_sec = 1000.0 + i;
        f.global_steps = steps;
        f.epochs_completed = 1;
        writer.enqueue(run.id, f);
        runs.push_back(run);
    }
    writer.flush();
    return runs;
}

}  // namespace hearth::test
