# The finders' dialogs (Run → Find Batch Size…, Find Learning Rate…) and the runner that keeps
# the finder off the GUI thread.
target_sources(hearth_ui PRIVATE
  tune/FinderRunner.h tune/FinderRunner.cpp
  tune/FinderDialog.h tune/FinderDialog.cpp
  tune/LrFinderDialog.h tune/LrFinderDialog.cpp
  tune/BatchSizeFinderDialog.h tune/BatchSizeFinderDialog.cpp)
