#include "engine/train/FitProgress.h"

namespace hearth {

bool EpochProgress::operator==(const EpochProgress& o) const {
    return totals.loss_sum == o.totals.loss_sum && totals.correct == o.totals.correct &&
           totals.samples == o.totals.samples && totals.batches == o.totals.batches &&
           local_samples == o.local_samples && local_flops == o.local_flops && skipped_steps == o.skipped_steps &&
           wait_ms == o.wait_ms && train_time_s == o.train_time_s;
}

void FitTotals::add(const EpochProgress& epoch) {
    train_s += epoch.train_time_s;
    samples += epoch.totals.samples;
    rank_samples += epoch.local_samples;
    rank_flops += epoch.local_flops;
    rank_train_s += epoch.train_time_s;
    rank_wait_s += epoch.wait_ms / 1000.0;
}

bool FitTotals::operator==(const FitTotals& o) const {
    return train_s == o.train_s && samples == o.samples && rank_samples == o.rank_samples && rank_flops == o.rank_flops &&
           rank_train_s == o.rank_train_s && rank_wait_s == o.rank_wait_s && best_val_accuracy == o.best_val_accuracy;
}

bool FitProgress::operator==(const FitProgress& o) const {
    return loop == o.loop && epoch == o.epoch && fit == o.fit && elapsed_s == o.elapsed_s;
}

}  // namespace hearth
