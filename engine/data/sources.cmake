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
  data/Augment.cpp)
if(HEARTH_WITH_CUDA)
  target_sources(hearth_engine PRIVATE data/CudaBatchCopy.cpp)   # copies on a side stream
endif()
target_link_libraries(hearth_engine PRIVATE ZLIB::ZLIB)
