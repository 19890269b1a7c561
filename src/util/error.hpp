#pragma once
// Errors a user can act on. The CLI turns them into one line `heed: error: ...` and an exit code:
// UsageError (bad flag, bad config, bad value) exits 2, Error (anything else) exits 1.
#include <stdexcept>
#include <string>

namespace heed {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct UsageError : Error {
  using Error::Error;
};

// Raised when the user pressed Ctrl-C; long loops poll `interrupted()` and unwind with this.
struct Interrupted : Error {
  Interrupted() : Error("interrupted") {}
};

}  // namespace heed
