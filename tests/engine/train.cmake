# Tests of engine/models, engine/train and engine/run.
hearth_add_test(NAME test_models SOURCES train/test_models.cpp TORCH LABELS engine train)
hearth_add_test(NAME test_precision SOURCES train/test_precision.cpp TORCH LABELS engine train)
# The optimizer kernels (engine/optim): foreach and fused against torch::optim, with the GradScaler.
hearth_add_test(NAME test_optimizers SOURCES train/test_optimizers.cpp TORCH LABELS engine train)
hearth_add_test(NAME test_trainer SOURCES train/test_trainer.cpp train/TrainTestSupport.h TORCH LABELS engine train)
hearth_add_test(NAME test_run_experiment SOURCES train/test_run_experiment.cpp train/TrainTestSupport.h TORCH LABELS engine train threads)
# The CUDA paths; every test skips without a CUDA device and must run under scripts/gpu-check.
hearth_add_test(NAME test_cuda SOURCES train/test_cuda.cpp train/TrainTestSupport.h TORCH LABELS engine train cuda)
hearth_add_test(NAME test_training_state SOURCES train/test_training_state.cpp train/TrainTestSupport.h TORCH LABELS engine train threads)
# The default generators, read and set in one place (engine/train/RandomState).
hearth_add_test(NAME test_random_state SOURCES train/test_random_state.cpp TORCH LABELS engine train)
hearth_add_test(NAME test_trainer_seams SOURCES train/test_trainer_seams.cpp train/TrainTestSupport.h TORCH LABELS engine train)
# The batch-size and learning-rate finders (engine/run/Finders).
hearth_add_test(NAME test_finders SOURCES train/test_finders.cpp train/TrainTestSupport.h TORCH LABELS engine train TIMEOUT 600)
# DDP on c10d: two real processes (ddp_rank_child) per case, where c10d with Gloo is built in.
if(HEARTH_WITH_C10D)
  add_executable(ddp_rank_child train/ddp_rank_child.cpp train/DdpTestSupport.h)
  hearth_set_warnings(ddp_rank_child)
  target_include_directories(ddp_rank_child PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(ddp_rank_child PRIVATE hearth_engine_internal)
  target_compile_definitions(ddp_rank_child PRIVATE HEARTH_FIXTURES_DIR="${HEARTH_FIXTURES_DIR}")
  foreach(_ddp_test test_ddp test_ddp_world)
    hearth_add_test(NAME ${_ddp_test} SOURCES train/${_ddp_test}.cpp train/DdpWorld.h train/DdpTestSupport.h TORCH
                    LABELS engine train dist TIMEOUT 600)
    target_compile_definitions(${_ddp_test} PRIVATE HEARTH_DDP_CHILD_PATH="$<TARGET_FILE:ddp_rank_child>")
    add_dependencies(${_ddp_test} ddp_rank_child)
  endforeach()
endif()
# Device statistics through NVML, against a fake libnvidia-ml built here (whole, and without
# nvmlDeviceGetPowerUsage), so loading, sampling, a missing symbol and a failing call are tested
# without a GPU.
add_library(fake_nvml SHARED "${HEARTH_TEST_SUPPORT_DIR}/fake_nvml.cpp")
add_library(fake_nvml_nopower SHARED "${HEARTH_TEST_SUPPORT_DIR}/fake_nvml.cpp")
target_compile_definitions(fake_nvml_nopower PRIVATE FAKE_NVML_NO_POWER)
hearth_add_test(NAME test_device_stats SOURCES train/test_device_stats.cpp TORCH LABELS engine train)
target_compile_definitions(test_device_stats PRIVATE FAKE_NVML_PATH="$<TARGET_FILE:fake_nvml>"
                           FAKE_NVML_NOPOWER_PATH="$<TARGET_FILE:fake_nvml_nopower>")
add_dependencies(test_device_stats fake_nvml fake_nvml_nopower)
hearth_add_test(NAME test_profiling SOURCES train/test_profiling.cpp train/TrainTestSupport.h TORCH LABELS engine train)
hearth_add_test(NAME test_torchscript SOURCES train/test_torchscript.cpp TORCH LABELS engine train models)
# torchvision's ResNets: parity with torchvision's logits on its own saved weights (fixtures made
# by tests/fixtures/make_resnet_fixtures.py into the build folder on first run, ~150 MB).
hearth_add_test(NAME test_resnet SOURCES train/test_resnet.cpp TORCH LABELS engine train models)
target_compile_definitions(test_resnet PRIVATE HEARTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                           HEARTH_RESNET_FIXTURES="${CMAKE_CURRENT_BINARY_DIR}/resnet-fixtures")
