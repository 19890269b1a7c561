#pragma once
// An exception must not leave an OpenMP region: the runtime would call std::terminate (a
// bad_alloc in a worker would abort heed instead of ending in "heed: error: out of memory").
// Each iteration runs through capture(); the first exception is rethrown after the region.
#include <exception>
#include <mutex>

namespace heed {

class ParallelFailure {
 public:
  template <class Body>
  void capture(Body&& body) noexcept {
    try {
      body();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace heed
