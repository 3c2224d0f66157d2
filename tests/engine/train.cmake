# Tests of engine/models, engine/train and engine/run.
hearth_add_test(NAME test_models SOURCES test_models.cpp TORCH LABELS engine train)
hearth_add_test(NAME test_precision SOURCES test_precision.cpp TORCH LABELS engine train)
hearth_add_test(NAME test_trainer SOURCES test_trainer.cpp TrainTestSupport.h TORCH LABELS engine train)
hearth_add_test(NAME test_run_experiment SOURCES test_run_experiment.cpp TrainTestSupport.h TORCH LABELS engine train threads)
# The CUDA paths; every test skips without a CUDA device and must run under scripts/gpu-check.
hearth_add_test(NAME test_cuda SOURCES test_cuda.cpp TrainTestSupport.h TORCH LABELS engine train cuda)
hearth_add_test(NAME test_trainer_seams SOURCES test_trainer_seams.cpp TrainTestSupport.h TORCH LABELS engine train)
