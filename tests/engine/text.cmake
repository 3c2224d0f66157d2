# Tests of engine/text and the text models' checkpoint reading: the BERT WordPiece tokenizer and
# the safetensors reader against Hugging Face's own libraries (fixtures).
hearth_add_test(NAME test_bert_tokenizer SOURCES text/test_bert_tokenizer.cpp LIBS hearth_engine nlohmann_json::nlohmann_json
  LABELS engine text)
hearth_add_test(NAME test_safetensors SOURCES text/test_safetensors.cpp LIBS nlohmann_json::nlohmann_json TORCH
  LABELS engine text)
target_compile_definitions(test_safetensors PRIVATE HEARTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
hearth_add_test(NAME test_wordnet_glosses SOURCES text/test_wordnet_glosses.cpp LIBS hearth_engine LABELS engine text data)
hearth_add_test(NAME test_transformer SOURCES text/test_transformer.cpp TORCH LABELS engine text models)
target_compile_definitions(test_transformer PRIVATE HEARTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
hearth_add_test(NAME test_text_data SOURCES text/test_text_data.cpp TORCH LABELS engine text data)
