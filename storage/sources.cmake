# Sources of storage/ (listed, not globbed).
target_sources(hearth_storage PRIVATE
  Sqlite.cpp
  Schema.cpp
  StepBlock.cpp
  Sha256.cpp
  ProcessIdentity.cpp
  RunStore.cpp
  RunStoreSeries.cpp
  RunEdits.cpp
  BatchWriter.cpp
  RunWriter.cpp
  tensorboard/EventFile.cpp
  tensorboard/TensorBoardExport.cpp)
