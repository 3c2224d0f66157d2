# Sources of engine/data (listed, not globbed).
find_package(ZLIB REQUIRED)   # IDX files ship gzip-compressed
target_sources(hearth_engine PRIVATE
  data/Batch.cpp
  data/Dataset.cpp
  data/Permutation.cpp
  data/IdxDataset.cpp
  data/formats/TextEncoding.cpp
  data/formats/IdxFile.cpp
  data/WordNetGlosses.cpp
  data/formats/CsvReader.cpp
  data/CsvDataset.cpp
  data/SplitPlan.cpp
  data/DataModule.cpp
  data/Loader.cpp
  data/Augment.cpp
  data/images/ImageDecode.cpp
  data/images/DecodedImages.cpp
  data/images/ImageFolderDataset.cpp
  data/images/ImageFolderSplits.cpp)
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE data/CudaBatchCopy.cpp)   # copies on a side stream
endif()
target_link_libraries(hearth_engine PRIVATE ZLIB::ZLIB)
# Torch-free: an image folder's listing (the reports find a prediction's file with it), and
# writing a file whole (predictions, the token cache, exported event files).
target_sources(hearth_engine_api PRIVATE data/images/ImageFolderScan.cpp data/formats/WholeFile.cpp)
# Image folders: JPEG through libjpeg-turbo's TurboJPEG API, PNG through libpng (Debian's
# libturbojpeg0-dev and libpng-dev).
find_package(PNG REQUIRED)
find_library(TURBOJPEG_LIBRARY NAMES turbojpeg REQUIRED)
find_path(TURBOJPEG_INCLUDE_DIR turbojpeg.h REQUIRED)
target_include_directories(hearth_engine SYSTEM PRIVATE "${TURBOJPEG_INCLUDE_DIR}")
target_link_libraries(hearth_engine PRIVATE PNG::PNG "${TURBOJPEG_LIBRARY}")
