# Sources of engine/dist (listed, not globbed). Rendezvous reads launchers' environments and
# StoreProbe asks a launcher's store which protocol it speaks: torch-free, in hearth_engine_api
# with the launch plan that reads the environment; C10d.cpp (the one unit that includes c10d) and the distributed strategies wherever
# c10d's Gloo header compiles: it needs Gloo's headers, which neither Debian's libtorch-dev nor the
# PyTorch wheel ships, so scripts/install-deps installs libgloo-dev. The wheel (cuda preset) adds
# NCCL, through the USE_C10D_NCCL definition its torch_cuda target carries.
target_sources(hearth_engine_api PRIVATE dist/Rendezvous.cpp dist/StoreProbe.cpp)
set(HEARTH_WITH_C10D OFF)
if(EXISTS "/usr/include/gloo/config.h")
  set(HEARTH_WITH_C10D ON)
endif()
set(HEARTH_WITH_C10D ${HEARTH_WITH_C10D} PARENT_SCOPE)
if(HEARTH_WITH_C10D)
  target_sources(hearth_engine PRIVATE dist/C10d.cpp strategy/DistributedStrategy.cpp strategy/DdpStrategy.cpp
                 strategy/Zero2Strategy.cpp strategy/Zero3Strategy.cpp strategy/PipelineStrategy.cpp)
  target_compile_definitions(hearth_engine PRIVATE HEARTH_WITH_C10D=1)
  set_source_files_properties(dist/C10d.cpp PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  if(Torch_VERSION VERSION_LESS 2.0)
    # Debian's reducer.hpp includes a dist-autograd header libtorch-dev lacks: a two-name
    # stand-in, for this one unit only (the wheel ships the real header).
    set_source_files_properties(dist/C10d.cpp PROPERTIES INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/dist/shim")
  endif()
endif()
message(STATUS "Hearth: distributed (c10d, Gloo) ${HEARTH_WITH_C10D}")
