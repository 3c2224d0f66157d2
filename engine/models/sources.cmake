# Sources of engine/models (listed, not globbed).
target_sources(hearth_engine PRIVATE
  models/ModelRegistry.cpp
  models/ModelFlops.cpp
  models/Mlp.cpp
  models/Cnn.cpp
  models/TransformerSpec.cpp
  models/Transformer.cpp
  models/ActivationCheckpoint.cpp
  models/TorchScriptModel.cpp
  models/ResNet.cpp)
