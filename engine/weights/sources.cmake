# Sources of engine/weights (listed, not globbed): the files that hold weights, read without
# Python: safetensors, torch.save state_dicts, Hugging Face checkpoint folders, and what a model
# file holds (hearth-cli inspect).
target_sources(hearth_engine PRIVATE
  weights/SafeTensorsHeader.cpp
  weights/SafeTensors.cpp
  weights/StateDictFile.cpp
  weights/HfCheckpoint.cpp
  weights/ModelFileInfo.cpp)
