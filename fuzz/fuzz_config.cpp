// The experiment JSON reader and the validator on arbitrary text: parsing throws only
// ConfigError; a config that parses validates without crashing (on a CPU machine and on a
// two-GPU one), and writing it back and reading that again gives the same JSON.
#include "engine/config/ExperimentConfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    hearth::ExperimentConfig config;
    try {
        config = hearth::configFromJson(text);
    } catch (const hearth::ConfigError&) {
        return 0;
    }
    hearth::DeviceCapabilities cpu;
    cpu.cpu_threads = 2;
    hearth::DeviceCapabilities gpus;
    gpus.cuda_available = true;
    gpus.cuda_device_count = 2;
    gpus.cuda_bf16 = true;
    gpus.distributed = true;
    gpus.cuda_device_names = {"GPU 0", "GPU 1"};
    gpus.cuda_device_memory = {int64_t{80} << 30, int64_t{80} << 30};
    for (const auto& caps : {cpu, gpus}) {
        (void)hearth::validate(config, caps);
        (void)hearth::resolveTrainer(config.trainer, caps);
    }
    const std::string written = hearth::configToJson(config);
    if (hearth::configToJson(hearth::configFromJson(written)) != written) __builtin_trap();
    return 0;
}
