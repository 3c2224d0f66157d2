#include "engine/monitor/DeviceStatsSampler.h"

#include <algorithm>
#include <ctime>

namespace hearth {

double processCpuSeconds() {
    timespec ts{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

DeviceStatsSampler::DeviceStatsSampler(std::unique_ptr<Nvml> nvml, std::vector<int> nvml_indices,
                                       std::chrono::milliseconds period)
    : nvml_(std::move(nvml)), indices_(std::move(nvml_indices)), period_(period) {
    if (!nvml_ || !nvml_->available()) indices_.clear();
    last_cpu_s_ = processCpuSeconds();
    last_wall_ = std::chrono::steady_clock::now();
    sample();  // GPU values at once; the CPU share needs an interval, so it stays unknown until the next
    thread_ = std::thread([this] { run(); });
}

DeviceStatsSampler::~DeviceStatsSampler() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void DeviceStatsSampler::run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
        if (wake_.wait_for(lock, period_, [this] { return stop_; })) break;
        lock.unlock();
        sample();
        lock.lock();
    }
}

void DeviceStatsSampler::sample() {
    Snapshot s;
    const double cpu = processCpuSeconds();
    const auto wall = std::chrono::steady_clock::now();
    const double wall_s = std::chrono::duration<double>(wall - last_wall_).count();
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    if (wall_s > 0.05) {
        s.cpu_utilization = std::clamp((cpu - last_cpu_s_) / wall_s / cores, 0.0, 1.0);
        last_cpu_s_ = cpu;
        last_wall_ = wall;
    }
    for (const int index : indices_) s.gpus.push_back(nvml_->read(index));
    std::lock_guard lock(mutex_);
    if (s.cpu_utilization < 0.0) s.cpu_utilization = latest_.cpu_utilization;
    latest_ = std::move(s);
    ++taken_;
}

DeviceStatsSampler::Snapshot DeviceStatsSampler::latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
}

int64_t DeviceStatsSampler::samplesTaken() const {
    std::lock_guard lock(mutex_);
    return taken_;
}

std::vector<std::string> DeviceStatsSampler::takeNotes() {
    return nvml_ ? nvml_->takeNotes() : std::vector<std::string>{};
}

}  // namespace hearth
