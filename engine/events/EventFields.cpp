#include "engine/events/EventFields.h"

namespace hearth::fields {
namespace {

// The step-time breakdown inside the event at `Group` (StepMetrics's or EpochMetrics's), stored
// with `prefix` ("bd_") or not at all ("" = JSON only).
template <auto Group>
auto breakdownRows(const std::string& prefix) {
    auto rows = std::vector{
        field<Group, &StepBreakdown::data_wait_ms>("data_wait_ms").withUnit("ms"),
        field<Group, &StepBreakdown::host_to_device_ms>("host_to_device_ms").withUnit("ms"),
        field<Group, &StepBreakdown::forward_ms>("forward_ms").withUnit("ms"),
        field<Group, &StepBreakdown::backward_ms>("backward_ms").withUnit("ms"),
        field<Group, &StepBreakdown::comm_wait_ms>("comm_wait_ms").withUnit("ms"),
        field<Group, &StepBreakdown::optimizer_ms>("optimizer_ms").withUnit("ms"),
        field<Group, &StepBreakdown::sync_ms>("sync_ms").withUnit("ms"),
        field<Group, &StepBreakdown::step_ms>("step_ms").withUnit("ms"),
        field<Group, &StepBreakdown::profiled>("profiled"),
    };
    for (auto& f : rows) {
        f.inGroup("breakdown");
        if (prefix.empty()) f.notStored();
        else f.storedAs(prefix + f.name);
    }
    return rows;
}

// The memory breakdown at `Path` (none: a MemoryBreakdown itself).
template <auto... Path>
auto memoryRows() {
    return std::vector{
        field<Path..., &MemoryBreakdown::device>("device"),
        field<Path..., &MemoryBreakdown::parameters_bytes>("parameters_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::gradients_bytes>("gradients_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::optimizer_state_bytes>("optimizer_state_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::activations_bytes>("activations_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::reserved_unused_bytes>("reserved_unused_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::cuda_graph_bytes>("cuda_graph_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::other_bytes>("other_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::peak_bytes>("peak_bytes").withUnit("bytes"),
        field<Path..., &MemoryBreakdown::offloaded_bytes>("offloaded_bytes").withUnit("bytes"),
    };
}

template <typename E>
void append(std::vector<Field<E>>& table, std::vector<Field<E>> rows) {
    for (auto& f : rows) table.push_back(std::move(f));
}

}  // namespace

const std::vector<Field<StepMetrics>>& stepFields() {
    using S = StepMetrics;
    // Stored in step blocks by position: append new rows at the end of the stored ones.
    static const std::vector<Field<S>> table = [] {
        std::vector<Field<S>> t{
            field<&S::epoch>("epoch"),
            field<&S::batch>("batch"),
            field<&S::batches_per_epoch>("batches_per_epoch"),
            field<&S::global_step>("global_step"),
            field<&S::loss>("loss").inCsv("train_loss").inTensorBoard("train/loss"),
            field<&S::accuracy>("accuracy").inCsv("train_acc").inTensorBoard("train/accuracy"),
            field<&S::lr>("lr").inCsv("lr").inTensorBoard("train/lr"),
            field<&S::loss_scale>("loss_scale").inCsv("loss_scale").inTensorBoard("train/loss_scale", When::Scaled),
            field<&S::samples_per_sec>("samples_per_sec").withUnit("1/s").inCsv("samples_per_sec")
                .inTensorBoard("speed/samples_per_sec"),
            field<&S::step_time_ms>("step_time_ms").withUnit("ms").inCsv("step_time_ms")
                .inTensorBoard("speed/step_time_ms"),
            field<&S::data_wait_ms>("data_wait_ms").withUnit("ms").inCsv("data_wait_ms")
                .inTensorBoard("speed/data_wait_ms"),
            field<&S::elapsed_s>("elapsed_s").withUnit("s"),
            field<&S::eta_s>("eta_s").withUnit("s"),
            field<&S::skipped_steps>("skipped_steps").inCsv("skipped_steps")
                .inTensorBoard("train/skipped_steps", When::Scaled),
            field<&S::tflops>("tflops").withUnit("TFLOP/s").unknownWhenNegative().inCsv("tflops")
                .inTensorBoard("speed/tflops"),
            field<&S::mfu>("mfu").unknownWhenNegative().inCsv("mfu").inTensorBoard("speed/mfu"),
        };
        // Live only: the interval's profiled micro-batches (the epoch stores its breakdown).
        append(t, breakdownRows<&S::breakdown>(""));
        return t;
    }();
    return table;
}

const std::vector<Field<EpochMetrics>>& epochFields() {
    using M = EpochMetrics;
    static const std::vector<Field<M>> table = [] {
        std::vector<Field<M>> t{
            field<&M::epoch>("epoch").inTensorBoard("epoch/epoch"),
            field<&M::global_step>("global_step"),
            field<&M::train_loss>("train_loss").inCsv("train_loss_epoch").inTensorBoard("epoch/train_loss"),
            field<&M::train_accuracy>("train_accuracy").storedAs("train_acc").inCsv("train_acc_epoch")
                .inTensorBoard("epoch/train_accuracy"),
            field<&M::val_loss>("val_loss").inCsv("val_loss").inTensorBoard("epoch/val_loss", When::Validated),
            field<&M::val_accuracy>("val_accuracy").storedAs("val_acc").inCsv("val_acc")
                .inTensorBoard("epoch/val_accuracy", When::Validated),
            field<&M::lr>("lr").inCsv("lr").inTensorBoard("epoch/lr"),
            field<&M::epoch_time_s>("epoch_time_s").withUnit("s").inCsv("epoch_time_s").inTensorBoard("epoch/time_s"),
            field<&M::samples_per_sec>("samples_per_sec").withUnit("1/s").inTensorBoard("epoch/samples_per_sec"),
            field<&M::data_wait_share>("data_wait_share").inTensorBoard("epoch/data_wait_share"),
            field<&M::skipped_steps>("skipped_steps").inTensorBoard("epoch/skipped_steps", When::Scaled),
            field<&M::is_best>("is_best"),
        };
        append(t, breakdownRows<&M::breakdown>("bd_"));
        return t;
    }();
    return table;
}

const std::vector<Field<DeviceSample>>& deviceFields() {
    using D = DeviceSample;
    static const std::vector<Field<D>> table{
        field<&D::elapsed_s>("elapsed_s").withUnit("s"),
        field<&D::device>("device"),
        field<&D::name>("name"),
        field<&D::allocated_bytes>("allocated_bytes").withUnit("bytes"),
        field<&D::reserved_bytes>("reserved_bytes").withUnit("bytes"),
        field<&D::peak_bytes>("peak_bytes").withUnit("bytes"),
        field<&D::total_bytes>("total_bytes").withUnit("bytes"),
        field<&D::utilization>("utilization").unknownWhenNegative(),
        field<&D::rank>("rank"),
        field<&D::relayed>("relayed").notStored(),
        field<&D::driver_used_bytes>("driver_used_bytes").withUnit("bytes").unknownWhenNegative(),
        field<&D::temperature_c>("temperature_c").withUnit("°C").unknownWhenNegative(),
        field<&D::power_w>("power_w").withUnit("W").unknownWhenNegative(),
        field<&D::power_limit_w>("power_limit_w").withUnit("W").unknownWhenNegative(),
        field<&D::sm_clock_mhz>("sm_clock_mhz").withUnit("MHz").unknownWhenNegative(),
    };
    return table;
}

const std::vector<Field<RankSummary>>& rankFields() {
    using R = RankSummary;
    static const std::vector<Field<R>> table{
        field<&R::rank>("rank"),
        field<&R::world_size>("world_size"),
        field<&R::backend>("backend"),
        field<&R::device>("device"),
        field<&R::pid>("pid"),
        field<&R::samples>("samples"),
        field<&R::train_time_s>("train_time_s").withUnit("s"),
        field<&R::samples_per_sec>("samples_per_sec").withUnit("1/s"),
        field<&R::data_wait_s>("data_wait_s").withUnit("s"),
        field<&R::peak_memory_bytes>("peak_memory_bytes").withUnit("bytes"),
        field<&R::log_path>("log_path"),
        field<&R::steps>("steps"),
        field<&R::comm_steps>("comm_steps"),
        field<&R::comm_ms>("comm_ms").withUnit("ms"),
        field<&R::overlap_ms>("overlap_ms").withUnit("ms"),
        field<&R::gradients_bytes>("gradients_bytes").withUnit("bytes"),
        field<&R::optimizer_state_bytes>("optimizer_state_bytes").withUnit("bytes"),
        field<&R::final>("final").notStored(),
    };
    return table;
}

const std::vector<Field<MemoryBreakdown>>& memoryFields() {
    static const std::vector<Field<MemoryBreakdown>> table = memoryRows<>();
    return table;
}

const std::vector<Field<RunFinished>>& finishedFields() {
    using F = RunFinished;
    // The runs row keeps the summary under its own column names (storage/BatchWriter's
    // onFinished); the memory breakdown is stored from memoryFields().
    static const std::vector<Field<F>> table = [] {
        std::vector<Field<F>> t{
            field<&F::status>("status"),
            field<&F::train_time_s>("train_time_s").withUnit("s"),
            field<&F::total_time_s>("total_time_s").withUnit("s"),
            field<&F::best_val_accuracy>("best_val_accuracy"),
            field<&F::test_accuracy>("test_accuracy"),
            field<&F::test_loss>("test_loss"),
            field<&F::samples_per_sec>("samples_per_sec").withUnit("1/s"),
            field<&F::tflops>("tflops").withUnit("TFLOP/s").unknownWhenNegative(),
            field<&F::mfu>("mfu").unknownWhenNegative(),
            field<&F::peak_memory_bytes>("peak_memory_bytes").withUnit("bytes"),
            field<&F::epochs_completed>("epochs_completed"),
            field<&F::global_steps>("global_steps"),
            field<&F::stop_reason>("stop_reason"),
        };
        append(t, memoryRows<&F::memory>());
        for (auto& f : t) f.notStored();
        for (size_t i = t.size() - memoryFields().size(); i < t.size(); ++i) t[i].inGroup("memory");
        return t;
    }();
    return table;
}

}  // namespace hearth::fields
