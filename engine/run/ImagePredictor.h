#pragma once
// ImagePredictor: `hearth-cli predict --images`: a run trained on images (an image folder, or idx
// files such as Fashion-MNIST; any image model: cnn, mlp, the resnets, torchscript) over image
// files, folders of them, or a labelled folder in the ImageFolder layout. Each image is decoded,
// resized and centre-cropped, and normalised exactly as the run's evaluation saw its images
// (DecodedImages; ImageNet's statistics for an image folder, the training file's mean and
// standard deviation for idx, in grey at the idx images' size). Public header: standard types
// only (app/cli includes it without LibTorch).

#include "engine/run/TextPredictor.h"

#include <string>
#include <vector>

namespace hearth {

struct ImagePredictOptions {
    // .jpg/.jpeg/.png files and folders (every image under a folder, recursively, sorted; a
    // folder whose subfolders are among the run's classes is labelled by them).
    std::vector<std::string> inputs;
    std::string output_csv;
    int64_t batch_size = 64;
    PredictProgress on_progress;
};

// Output columns: file, predicted (class name), confidence, true (the class folder's name, or
// empty), then prob:<class> for every class. Throws DataError (files, checkpoint, an idx run's
// training file) or ConfigError (a run that did not train on images).
PredictResult predictImages(const PredictModel& model, const ImagePredictOptions& options);

}  // namespace hearth
