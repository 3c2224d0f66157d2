# Tests of engine/text: the BERT WordPiece tokenizer against Hugging Face's (fixtures).
hearth_add_test(NAME test_bert_tokenizer SOURCES test_bert_tokenizer.cpp LIBS hearth_engine nlohmann_json::nlohmann_json
  LABELS engine text)
