#pragma once
// A model too large to train on this machine is refused before it is allocated: a size read from
// data (a graph's largest feature column) or a typo in a config would otherwise end in the
// kernel's out-of-memory kill, or in "std::bad_alloc" naming nothing.
#include <cstdint>
#include <string>

namespace heed {

// Bytes one parameter takes in training: its value, gradient and two Adam moments, in fp32.
constexpr double kTrainingBytesPerParameter = 16;

// Throws Error when `parameters` would not fit in `memory_bytes` (default: this machine's
// physical memory) in training; `sizes` says where the size came from.
void check_trainable(double parameters, const std::string& sizes, double memory_bytes = 0);

}  // namespace heed
