hearth_add_test(NAME test_experiment_config SOURCES config/test_experiment_config.cpp LIBS hearth_engine LABELS engine)
hearth_add_test(NAME test_launch_plan SOURCES config/test_launch_plan.cpp LIBS hearth_engine_api LABELS engine)
# The store-protocol probe against stand-in stores on 127.0.0.1 (torch-free, like the launch plan).
hearth_add_test(NAME test_store_probe SOURCES config/test_store_probe.cpp LIBS hearth_engine_api LABELS engine dist)
# The paths a config reads, checked on this machine (torch-free).
hearth_add_test(NAME test_input_problems SOURCES config/test_input_problems.cpp LIBS hearth_engine_api LABELS engine)
