#pragma once
// How long a test waits for a process it started (hearth-cli, cpack, ...): the given time, times
// HEARTH_TEST_TIMEOUT_SCALE, which hearth_add_test sets from the CMake variable of that name (3 in
// the sanitizer presets, whose binaries run several times slower; 1 elsewhere), as it scales
// ctest's timeout and Qt Test's watchdog.

#include <QtGlobal>

namespace hearth::test {

inline int scaledTimeoutMs(int ms) {
    bool ok = false;
    const int scale = qEnvironmentVariableIntValue("HEARTH_TEST_TIMEOUT_SCALE", &ok);
    return ok && scale > 1 ? ms * scale : ms;
}

}  // namespace hearth::test
