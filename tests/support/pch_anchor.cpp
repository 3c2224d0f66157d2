// Anchor for the shared LibTorch precompiled header of the tests.
