#pragma once
// ImageFolderScan: the files of an image folder in torchvision's ImageFolder layout, one
// subfolder per class (ROOT/<class>/<image>), or split folders each with the same class
// subfolders (ROOT/train/<class>/..., ROOT/val/..., ROOT/test/...). Classes are the training
// subfolders' names in sorted order (torchvision's class indices); files are .jpg, .jpeg or .png
// (any case), sorted by name within each class. No LibTorch: the report and the workbench find a
// prediction's file with the same listing the run trained on.

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

struct ImageFile {
    std::string path;
    int64_t label = 0;
};

struct ImageFolderLayout {
    std::string root;
    std::vector<std::string> class_names;
    // Split folders: train, val and test as found (val/test may be empty); one folder of classes:
    // every file in `train`, val and test empty (they are split off by fraction).
    bool split_folders = false;
    std::vector<ImageFile> train, val, test;
    int64_t ignored_files = 0;   // files in class folders that are not .jpg/.jpeg/.png
};

// Throws DataError naming the folder: missing, no class subfolders, fewer than two classes, a
// class without images, a val/test class the training folder lacks.
ImageFolderLayout scanImageFolder(const std::string& root);

// True when `folder` looks like an image folder (a class subfolder holding a .jpg/.jpeg/.png,
// directly or under train/): what a folder dropped onto the workbench is opened as.
bool looksLikeImageFolder(const std::string& folder);

// The files a stored prediction's index counts in: the split's own folder when the layout has
// one, else the one listing every file (the split was carved from it).
const std::vector<ImageFile>& sourceFilesOf(const ImageFolderLayout& layout, bool test);

}  // namespace hearth
