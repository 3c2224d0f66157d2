# Sources of engine/dist (listed, not globbed). Rendezvous reads launchers' environments and is
# always built; C10d.cpp (the one unit that includes c10d) and the DDP strategy only where c10d
# with Gloo can be compiled: Debian's LibTorch 1.13 with libgloo-dev. The PyTorch wheel ships no
# Gloo headers (its NCCL path is still to come), so the cuda preset builds without ddp for now.
target_sources(hearth_engine PRIVATE dist/Rendezvous.cpp)
set(HEARTH_WITH_C10D OFF)
if(Torch_VERSION VERSION_LESS 2.0 AND EXISTS "/usr/include/gloo/config.h")
  set(HEARTH_WITH_C10D ON)
endif()
set(HEARTH_WITH_C10D ${HEARTH_WITH_C10D} PARENT_SCOPE)
if(HEARTH_WITH_C10D)
  target_sources(hearth_engine PRIVATE dist/C10d.cpp strategy/DistributedStrategy.cpp strategy/DdpStrategy.cpp
                 strategy/Zero2Strategy.cpp)
  target_compile_definitions(hearth_engine PRIVATE HEARTH_WITH_C10D=1)
  # Debian's reducer.hpp includes a dist-autograd header libtorch-dev lacks: a two-name stand-in,
  # for this one unit only.
  set_source_files_properties(dist/C10d.cpp PROPERTIES
    INCLUDE_DIRECTORIES "${CMAKE_CURRENT_SOURCE_DIR}/dist/shim"
    SKIP_PRECOMPILE_HEADERS ON)
endif()
message(STATUS "Hearth: distributed (c10d, Gloo) ${HEARTH_WITH_C10D}")
