hearth_add_test(NAME test_experiment_config SOURCES test_experiment_config.cpp LIBS hearth_engine LABELS engine)
hearth_add_test(NAME test_launch_plan SOURCES test_launch_plan.cpp LIBS hearth_engine_api LABELS engine)
# The store-protocol probe against stand-in stores on 127.0.0.1 (torch-free, like the launch plan).
hearth_add_test(NAME test_store_probe SOURCES test_store_probe.cpp FakeStore.h LIBS hearth_engine_api LABELS engine dist)
