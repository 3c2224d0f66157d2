# Sources of engine/text (listed, not globbed): tokenizers and text data for text models. Unicode
# properties, normalisation and case mapping come from ICU (libicu-dev; Qt links it too).
find_package(ICU REQUIRED COMPONENTS uc)
target_sources(hearth_engine PRIVATE
  text/BertTokenizer.cpp
  text/TokenizedCorpus.cpp
  text/TextCsv.cpp
  text/TextDataset.cpp
  text/TextSplits.cpp)
target_link_libraries(hearth_engine PRIVATE ICU::uc)
