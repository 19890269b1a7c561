#include "text/word_counter.hpp"

#include <spdlog/spdlog.h>

#include "text/words.hpp"
#include "util/interrupt.hpp"
#include "util/parallel.hpp"
#include "util/text_lines.hpp"
#include "util/threads.hpp"

namespace heed {

namespace {

constexpr size_t kBatchLines = 1 << 16;

void count_batch(const std::vector<std::string>& lines, std::vector<WordCounts>& per_thread) {
  const int threads = static_cast<int>(per_thread.size());
  const auto n = static_cast<long>(lines.size());
  ParallelFailure failure;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    failure.capture([&] {
      WordCounts& counts = per_thread[t];
      std::string key;
      for (long i = n * t / threads; i < n * (t + 1) / threads; ++i)
        for_each_word(trim_space(lines[i]), [&](std::string_view word) {  // as training reads the line
          key.assign(word);
          ++counts[key];
        });
    });
  }
  failure.rethrow();
}

}  // namespace

WordCounts count_words(const std::vector<std::string>& files) {
  std::vector<WordCounts> per_thread(std::max(1, num_threads()));
  std::vector<std::string> lines;
  size_t total_lines = 0;
  for (const auto& file : files) {
    LineReader reader(file);
    std::string line;
    for (;;) {
      lines.clear();
      while (lines.size() < kBatchLines && reader.next_text(line)) lines.push_back(line);
      if (lines.empty()) break;
      throw_if_interrupted();
      total_lines += lines.size();
      count_batch(lines, per_thread);
    }
  }
  WordCounts counts = std::move(per_thread[0]);
  for (size_t t = 1; t < per_thread.size(); ++t)
    for (auto& [word, n] : per_thread[t]) counts[word] += n;
  spdlog::info("tokenizer: {} lines, {} distinct words", total_lines, counts.size());
  return counts;
}

}  // namespace heed
