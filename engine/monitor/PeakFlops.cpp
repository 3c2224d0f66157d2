#include "engine/monitor/PeakFlops.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace hearth {
namespace {

// NVIDIA's datasheet figures, dense (the sparse ones are twice these), TFLOP/s.
struct GpuPeaks {
    const char* word;          // a word of the device name, as CUDA reports it
    const char* also;          // a second word it must have too ("" = none)
    double fp32, tf32, bf16, fp16;   // tf32/bf16 0: no such tensor-core path
};

// Most specific first: "H100 NVL" before "H100", "L40S" before "L4", "A100" before "A10".
const std::vector<GpuPeaks>& table() {
    static const std::vector<GpuPeaks> rows{
        {"H200", "NVL", 60.0, 417.5, 835.0, 835.0},
        {"H100", "NVL", 60.0, 417.5, 835.0, 835.0},
        {"H100", "PCIe", 51.2, 378.0, 756.0, 756.0},
        {"GH200", "", 67.0, 494.7, 989.4, 989.4},
        {"H200", "", 67.0, 494.7, 989.4, 989.4},     // SXM
        {"H100", "", 67.0, 494.7, 989.4, 989.4},     // SXM ("H100 80GB HBM3")
        {"A100", "", 19.5, 156.0, 312.0, 312.0},
        {"L40S", "", 91.6, 183.0, 362.05, 362.05},
        {"L4", "", 30.3, 60.0, 121.0, 121.0},
        {"A10", "", 31.2, 62.5, 125.0, 125.0},
        {"V100", "", 15.7, 0.0, 0.0, 125.0},
    };
    return rows;
}

bool hasWord(const std::string& name, const std::string& word) {
    std::istringstream words(name);
    std::string w;
    while (words >> w)
        if (w == word || w.rfind(word + "-", 0) == 0) return true;   // "H100-SXM5-80GB"
    return false;
}

std::string figure(double tflops) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", tflops);
    return text;
}

}  // namespace

std::optional<PeakFlops> densePeakFlops(const std::string& device_name, const std::string& precision, bool tf32) {
    for (const auto& row : table()) {
        if (!hasWord(device_name, row.word) || (row.also[0] && !hasWord(device_name, row.also))) continue;
        double peak = 0.0;
        std::string what;
        if (precision == "32-true") {
            peak = tf32 && row.tf32 > 0.0 ? row.tf32 : row.fp32;
            what = tf32 && row.tf32 > 0.0 ? "tf32" : "fp32";
        } else if (precision == "bf16-mixed" || precision == "bf16-true") {
            peak = row.bf16;
            what = "bf16";
        } else if (precision == "16-mixed" || precision == "16-true") {
            peak = row.fp16;
            what = "fp16";
        }
        if (peak <= 0.0) return std::nullopt;
        std::string basis = device_name;
        basis += ": ";
        basis += figure(peak);
        basis += " TFLOP/s dense ";
        basis += what;
        return PeakFlops{peak, basis};
    }
    return std::nullopt;
}

}  // namespace hearth
