#pragma once
// One translation request on its way through the server: its sentences (tokenized), the search
// settings they share, and the results the decoding workers fill in. The request's HTTP thread
// waits on it; workers may still hold it after the request gave up (a timeout), so it is shared.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "decode/translator.hpp"

namespace heed::serve {

using Clock = std::chrono::steady_clock;

// Settings that change the search: only sentences with equal keys can share a batch.
struct SearchKey {
  int beam = 1;
  int nbest = 1;
  bool operator==(const SearchKey&) const = default;
};

struct Job {
  SearchKey key;
  // Keep each hypothesis' attention rows for the alignments. Not part of the key: a batch keeps
  // them when any of its jobs asks (they change no translation), for that job alone.
  bool alignment = false;
  std::vector<std::vector<int32_t>> sources;      // per sentence, without </s>; empty = nothing to decode
  std::vector<std::vector<Translation>> results;  // per sentence, n-best, filled by the workers

  std::mutex mutex;
  std::condition_variable done;
  size_t remaining = 0;  // sentences not decoded yet
  std::string failure;   // set when a worker could not decode one of its batches
};

}  // namespace heed::serve
