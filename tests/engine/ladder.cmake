# The ladders: planned (which rungs apply, stacked or alone), judged over repeats, explained.
hearth_add_test(NAME test_technique_ladder SOURCES ladder/test_technique_ladder.cpp LIBS hearth_engine LABELS engine)
# Torch-free: the verdicts and the why-rules, on recorded measurements and breakdowns.
hearth_add_test(NAME test_ladder_verdict SOURCES ladder/test_ladder_verdict.cpp LIBS hearth_engine_api LABELS engine)
# Torch-free: predict, then measure (the footprint's line through two probes, its fit and JSON).
hearth_add_test(NAME test_footprint SOURCES ladder/test_footprint.cpp LIBS hearth_engine_api LABELS engine)
