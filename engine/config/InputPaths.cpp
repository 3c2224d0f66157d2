// inputProblems: the files and folders a config names that are not on this machine, or not of
// the kind the config reads there (a folder where one file is read, or the other way round).
#include "engine/config/ExperimentConfig.h"

#include <filesystem>

namespace hearth {
namespace {

enum class Want { Any, File, Folder };

struct NamedInput {
    std::string key;
    std::string path;
    Want want = Want::Any;
    std::string what;   // what the key reads, said to a path of the wrong kind
};

std::vector<NamedInput> namedInputs(const ExperimentConfig& config) {
    const DataConfig& d = config.data;
    const bool csv = d.kind == "csv" || d.kind == "text_csv";
    std::vector<NamedInput> named;
    if (csv)
        named.push_back({"data.path", d.path, Want::File,
                         d.kind + " data is one CSV file (a folder of class subfolders is data.kind image_folder, "
                                  "a folder of IDX files data.kind idx)"});
    else if (d.kind == "idx")
        named.push_back({"data.path", d.path, Want::Folder,
                         "idx data is the folder of the *-idx?-ubyte(.gz) files (a CSV file is data.kind csv)"});
    else if (d.kind == "image_folder")
        named.push_back({"data.path", d.path, Want::Folder,
                         "image_folder data is the folder of class subfolders (a CSV file is data.kind csv)"});
    else
        named.push_back({"data.path", d.path, Want::Any, ""});
    if (d.val_path) named.push_back({"data.val_path", *d.val_path, csv ? Want::File : Want::Any, "the validation data is one CSV file"});
    if (d.test_path) named.push_back({"data.test_path", *d.test_path, csv ? Want::File : Want::Any, "the test data is one CSV file"});
    if (isTextKind(d.kind) && d.tokenizer) named.push_back({"data.tokenizer", *d.tokenizer, Want::Any, ""});
    if (config.model.pretrained) named.push_back({"model.pretrained", *config.model.pretrained, Want::Any, ""});
    if (config.model.name == "torchscript" && config.model.path)
        named.push_back({"model.path", *config.model.path, Want::File, "a TorchScript module is one file (torch.jit.save)"});
    return named;
}

}  // namespace

std::vector<ConfigIssue> inputProblems(const ExperimentConfig& config) {
    namespace fs = std::filesystem;
    std::vector<ConfigIssue> issues;
    for (const NamedInput& input : namedInputs(config)) {
        if (input.path.empty()) continue;
        std::error_code ec;
        const fs::file_status status = fs::status(input.path, ec);
        if (!fs::exists(status)) {
            // The built-in data comes from Debian packages; other relative paths start at the cwd.
            const std::string where =
                input.path == kDefaultFashionMnistPath
                    ? " (Debian's dataset-fashion-mnist; scripts/install-deps installs it)"
                : input.path == kWordNetNouns ? " (Debian's wordnet-base; scripts/install-deps installs it)"
                : fs::path(input.path).is_relative() ? " (relative to " + fs::current_path(ec).string() + ")"
                                                     : "";
            issues.push_back({input.key, "no such file or folder: " + input.path + where});
        } else if (input.want == Want::File && fs::is_directory(status)) {
            issues.push_back({input.key, input.path + " is a folder; " + input.what});
        } else if (input.want == Want::Folder && !fs::is_directory(status)) {
            issues.push_back({input.key, input.path + " is a file; " + input.what});
        }
    }
    return issues;
}

}  // namespace hearth
