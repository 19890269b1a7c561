#pragma once
// Checkpoint averaging: the element-wise mean of the F32 tensors of several parameter files of
// the same model (same names, shapes and dtypes; anything else is an error naming file and
// tensor). Metadata is taken from the first file.
#include <string>
#include <vector>

#include "io/safetensors.hpp"

namespace heed {

SafeTensorFile average_checkpoints(const std::vector<std::string>& paths);

}  // namespace heed
