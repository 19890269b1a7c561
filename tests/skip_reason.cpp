// Why a test cannot run on this CPU: nothing stops a test by default. The tests whose file name
// ends in _bf16 link needs_bf16.cpp, whose strong definition replaces this one.
__attribute__((weak)) const char* heed_test_skip_reason() { return nullptr; }
