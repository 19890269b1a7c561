#pragma once
// First step of BPE training: how often each word (see words.hpp) occurs in the training files.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace heed {

using WordCounts = std::unordered_map<std::string, int64_t>;

// Reads UTF-8 text files line by line (invalid UTF-8 or a NUL byte: heed::Error with file and
// line) and counts words on num_threads() threads; the counts do not depend on the thread count.
WordCounts count_words(const std::vector<std::string>& files);

}  // namespace heed
