# Tests of engine/data and engine/metrics' classification report.
find_package(ZLIB REQUIRED)   # the IDX test writes gzip files to corrupt
hearth_add_test(NAME test_idx_dataset SOURCES data/test_idx_dataset.cpp LIBS ZLIB::ZLIB TORCH LABELS engine data)
hearth_add_test(NAME test_csv_dataset SOURCES data/test_csv_dataset.cpp TORCH LABELS engine data)
hearth_add_test(NAME test_loader SOURCES data/test_loader.cpp TORCH LABELS engine data threads)
hearth_add_test(NAME test_data_module SOURCES data/test_data_module.cpp TORCH LABELS engine data)
hearth_add_test(NAME test_classification_report SOURCES data/test_classification_report.cpp
  LIBS hearth_engine LABELS engine metrics)
# Image folders: decoding, layouts, the decoded cache, unreadable files, the resized crop. Writes
# its images with libpng's and libjpeg-turbo's encoders.
hearth_add_test(NAME test_image_folder SOURCES data/test_image_folder.cpp TORCH LABELS engine data)
