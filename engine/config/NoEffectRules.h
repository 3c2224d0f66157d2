#pragma once
// The rules of ConfigKey::no_effect (ConfigSchema's key table names one per key): each returns ""
// where the key applies to `c` on a machine with `caps`, else why it does nothing there. Internal
// to engine/config.

#include "engine/config/ExperimentConfig.h"

#include <string>

namespace hearth {

std::string momentumRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string betasRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string epsRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string nesterovRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string amsgradRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string implementationRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string stepScheduleRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string warmupRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string finalLrRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string mlpRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string cnnRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string convolutionalRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string pretrainedRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string torchscriptRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string newTransformerRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string inplaceRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string dropoutRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string textDataRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string imageDataRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string imageFolderRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string fixedSizeDataRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string textCsvRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string csvFilesRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string testFractionRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string workersRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string cudaRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string distributedRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
// zero1, zero2 and zero3: each rank holds a share of the optimizer state (what
// trainer.offload_optimizer moves to the host).
bool shardsOptimizerState(const std::string& strategy);
std::string fsdpRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string pipelineRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string offloadRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string reducerRule(const ExperimentConfig& c, const DeviceCapabilities& caps);
std::string bucketRule(const ExperimentConfig& c, const DeviceCapabilities& caps);

}  // namespace hearth
