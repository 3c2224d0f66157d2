#include "engine/run/ImagePredictor.h"

#include "engine/data/DataError.h"
#include "engine/data/IdxDataset.h"
#include "engine/data/formats/CsvReader.h"
#include "engine/data/images/DecodedImages.h"
#include "engine/data/images/ImageFolderScan.h"
#include "engine/data/images/ImageFolderSplits.h"
#include "engine/models/ModelRegistry.h"
#include "engine/monitor/Elapsed.h"
#include "engine/run/NormalizationFile.h"
#include "engine/run/PredictionsCsv.h"
#include "engine/strategy/CheckpointFile.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

namespace hearth {
namespace {

namespace fs = std::filesystem;

struct Input {
    std::string path;
    std::string truth;   // "" = unknown
};

bool isImageFile(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// The run's class a class folder stands for: its name, or the name written with '_' for the
// characters a folder's name cannot hold or that scripts/make-image-folder replaces ("T-shirt_top",
// "Ankle_boot" for Fashion-MNIST's "T-shirt/top" and "Ankle boot"); "" when none.
std::string classOfFolder(const std::string& folder, const std::vector<std::string>& classes) {
    if (std::find(classes.begin(), classes.end(), folder) != classes.end()) return folder;
    for (const auto& c : classes) {
        std::string written = c;
        std::replace_if(written.begin(), written.end(), [](char ch) { return ch == '/' || ch == ' '; }, '_');
        if (written == folder) return c;
    }
    return {};
}

std::vector<Input> listInputs(const std::vector<std::string>& inputs, const std::vector<std::string>& classes) {
    std::vector<Input> out;
    for (const std::string& in : inputs) {
        std::error_code ec;
        if (fs::is_regular_file(in, ec)) {
            out.push_back({in, ""});
            continue;
        }
        if (!fs::is_directory(in, ec)) throw DataError(in + ": no such file or folder");
        // A labelled folder: its subfolders (or train/val/test's) are classes the run knows.
        bool labelled = false;
        try {
            const ImageFolderLayout layout = scanImageFolder(in);
            labelled = std::all_of(layout.class_names.begin(), layout.class_names.end(),
                                   [&](const std::string& c) { return !classOfFolder(c, classes).empty(); });
            if (labelled)
                for (const auto* split : {&layout.train, &layout.val, &layout.test})
                    for (const auto& f : *split)
                        out.push_back({f.path, classOfFolder(layout.class_names[static_cast<size_t>(f.label)], classes)});
        } catch (const DataError&) {
            labelled = false;
        }
        if (labelled) continue;
        std::vector<std::string> files;
        for (auto it = fs::recursive_directory_iterator(in, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) break;
            if (it->is_regular_file(ec) && isImageFile(it->path())) files.push_back(it->path().string());
        }
        std::sort(files.begin(), files.end());
        if (files.empty()) throw DataError(in + ": no .jpg, .jpeg or .png files in this folder");
        for (auto& f : files) out.push_back({std::move(f), ""});
    }
    if (out.empty()) throw ConfigError("--images", "give at least one image file or folder");
    return out;
}


// The run's model with its best checkpoint, for images of `channels` x `size` x `size`; a forward
// pass on a blank image checks that the weights take that shape (loading alone replaces tensors
// whole).
std::shared_ptr<ClassifierImpl> loadModel(const PredictModel& source, int channels, int64_t size) {
    const ExperimentConfig& config = *source.run_config;
    auto model =
        createModel(config.model, ModelInput{{channels, size, size}, static_cast<int64_t>(source.class_names.size())});
    loadCheckpointFile(source.checkpoint, *model);
    model->eval();
    torch::NoGradGuard no_grad;
    model->forward(torch::zeros({1, channels, size, size}));
    return model;
}

// How the run's images reached its model: their channels, their square size, the normalisation,
// and the model that takes them.
struct ImageInput {
    int channels = 3;
    int64_t size = 0;
    PixelNormalization norm;
    std::shared_ptr<ClassifierImpl> model;
};

ImageInput withModel(const PredictModel& source, ImageInput in) {
    try {
        in.model = loadModel(source, in.channels, in.size);
    } catch (const std::exception& e) {
        cannotLoadCheckpoint(source, e);
    }
    return in;
}

// A run that stored how its images reached the model (NormalizationFile): their channels, size
// and normalization, exactly.
ImageInput storedInput(const PredictModel& source, const StoredNormalization& stored) {
    const auto& shape = stored.sample_shape;   // {C, S, S}
    if (shape.size() != 3 || shape[1] != shape[2] || (shape[0] != 1 && shape[0] != 3) ||
        (stored.normalization.scaling.mean.size() != 1 &&
         stored.normalization.scaling.mean.size() != static_cast<size_t>(shape[0])))
        throw DataError(source.checkpoint + ": the run's images are not square with 1 or 3 channels; only those can be "
                        "predicted from image files");
    ImageInput in;
    in.channels = static_cast<int>(shape[0]);
    in.size = shape[1];
    in.norm = pixelNormalization(stored.normalization.scaling);
    return withModel(source, in);
}

// A run from before it stored them, on an image folder: data.image_size, ImageNet's statistics,
// in colour or grey, whichever the checkpoint loads as (its first layer's input channels).
ImageInput imageFolderInput(const PredictModel& source) {
    ImageInput in;
    in.size = source.run_config->data.image_size;
    try {
        in.model = loadModel(source, 3, in.size);
    } catch (const std::exception& rgb_error) {
        try {
            in.model = loadModel(source, 1, in.size);
            in.channels = 1;
        } catch (const std::exception&) {
            cannotLoadCheckpoint(source, rgb_error);
        }
    }
    in.norm = imageNetNormalization(in.channels);
    return in;
}

// A run from before it stored them, on MNIST or Fashion-MNIST (idx): grey images the size of
// its, normalised with the mean and standard deviation of its training file's pixels, which is
// read again for them (said in `note`).
ImageInput idxInput(const PredictModel& source, std::string& note) {
    const std::string& folder = source.run_config->data.path;
    std::shared_ptr<IdxDataset> train;
    try {
        train = IdxDataset::load(folder, IdxDataset::Split::Train);
    } catch (const DataError& e) {
        throw DataError(std::string("the run normalised its images with its training images' statistics, and those "
                                    "cannot be read here (data.path '") +
                        folder + "'): " + e.what());
    }
    const std::vector<int64_t> shape = train->sampleShape();   // {1, rows, cols}
    if (shape[1] != shape[2])
        throw DataError(folder + ": the run's images are " + std::to_string(shape[1]) + "x" + std::to_string(shape[2]) +
                        "; only square idx images can be predicted from image files");
    note = "the run stored no normalization (it is older): its training images' statistics were computed again from " +
           folder;
    ImageInput in;
    in.channels = 1;
    in.size = shape[1];
    in.norm.mean = train->mean();
    in.norm.std = train->std();
    return withModel(source, in);
}

}  // namespace

PredictResult predictImages(const PredictModel& source, const ImagePredictOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    if (!source.run_config) throw ConfigError("--run", "image predictions need a run (--run) trained on images");
    checkPredictionsOutput(options.output_csv, "");
    const ExperimentConfig& config = *source.run_config;
    if (!isImageKind(config.data.kind))
        throw ConfigError("--images", "the run trained on " + config.data.kind +
                                          " data, not images (image files are predicted with a run trained on an "
                                          "image folder or on idx images such as Fashion-MNIST)");
    if (options.batch_size < 1) throw ConfigError("--batch-size", "must be at least 1");
    const std::vector<Input> inputs = listInputs(options.inputs, source.class_names);
    std::string note;
    const ImageInput in = [&] {
        if (const auto stored = readNormalizationFile(source.checkpoint, config.data.kind))
            return storedInput(source, *stored);
        return config.data.kind == "idx" ? idxInput(source, note) : imageFolderInput(source);
    }();
    std::vector<std::string> paths;
    paths.reserve(inputs.size());
    for (const auto& input : inputs) paths.push_back(input.path);
    const DecodedImages images(paths, in.channels, in.size);
    ClassifierImpl& model = *in.model;

    const torch::Device device = predictionDevice();
    const auto n = static_cast<int64_t>(inputs.size());
    const auto classes = static_cast<int64_t>(source.class_names.size());
    const auto probabilities =
        classProbabilities(model, device, n, classes, options.batch_size, {}, [&](const std::vector<int64_t>& rows) {
            auto raw = torch::empty({static_cast<int64_t>(rows.size()), in.channels, in.size, in.size}, torch::kUInt8);
            images.fill(rows, raw);
            return model.forward(in.norm.apply(raw.to(device)));
        }, options.on_progress);

    PredictResult result;
    if (!note.empty()) result.notes.push_back(note);
    result.rows = n;
    result.class_names = source.class_names;
    result.device = device.str();
    PredictionsCsvColumns columns;
    columns.lead_name = "file";
    columns.lead = [&](int64_t i) { return csvField(inputs[static_cast<size_t>(i)].path); };
    columns.truth = [&](int64_t i) { return inputs[static_cast<size_t>(i)].truth; };
    writePredictionsCsv(options.output_csv, columns, probabilities, source.class_names, result);
    result.seconds = secondsSince(start);
    return result;
}

}  // namespace hearth
