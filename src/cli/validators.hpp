#pragma once
// Range checks for numeric flags, with messages a user can read: "--beam: got 0, expected an
// integer >= 1", as config errors read (CLI11's own print the limits of double, 300 digits long).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace heed::cli {

// Integers from `min` to `max`.
CLI::Validator whole_number(int64_t min, int64_t max = std::numeric_limits<int>::max());
// Finite numbers >= min, or > min when `exclusive`.
CLI::Validator number_from(double min, bool exclusive = false);

}  // namespace heed::cli
