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
// `every_rank`: data-parallel training stopped all its processes at the same update, so they can
// leave the job together instead of one ending it for all.
struct Interrupted : Error {
  explicit Interrupted(bool every_rank = false) : Error("interrupted"), every_rank(every_rank) {}
  bool every_rank;
};

}  // namespace heed
