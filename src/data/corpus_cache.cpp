#include "data/corpus_cache.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/fnv1a.hpp"

namespace heed {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'H', 'E', 'E', 'D', 'C', 'R', 'P', '2'};

struct Header {
  char magic[8];
  uint64_t key, pairs, tokens;
  uint32_t token_bytes, reserved;
  uint64_t pairs_read, kept, skipped_empty, skipped_too_long, skipped_ratio;
  uint64_t checksum;  // FNV-1a of the lengths' and ids' bytes as stored
};
static_assert(sizeof(Header) == 8 + 3 * 8 + 2 * 4 + 6 * 8);

template <typename T>
void add_bytes(Fnv1a& h, const std::vector<T>& v) {
  h.add(std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error("cannot read " + path + ": " + std::strerror(errno));
  std::error_code ec;
  const fs::path absolute = fs::weakly_canonical(path, ec);
  return (ec ? path : absolute.string()) + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

template <typename T>
bool read_array(std::FILE* f, std::vector<T>& v, size_t n) {
  v.resize(n);
  return n == 0 || std::fread(v.data(), sizeof(T), n, f) == n;
}

}  // namespace

uint64_t corpus_cache_key(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files,
                          const Tokenizers& tokenizers, const CorpusFilter& filter) {
  Fnv1a h;
  h.add_field(std::string_view(kMagic, sizeof kMagic));
  for (size_t k = 0; k < source_files.size(); ++k) {
    h.add_field(file_identity(source_files[k]));
    h.add_field(file_identity(target_files[k]));
  }
  h.add_field(tokenizers.to_json().dump());
  h.add_field(std::to_string(filter.max_length));
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, "%.17g", filter.max_length_ratio);
  h.add_field(ratio);
  if (filter.first_lines > 0) h.add_field("first_lines " + std::to_string(filter.first_lines));
  return h.h;
}

std::string corpus_cache_path(const std::string& cache_dir, uint64_t key) {
  char name[40];
  std::snprintf(name, sizeof name, "corpus-%016llx.bin", static_cast<unsigned long long>(key));
  return (fs::path(cache_dir) / name).string();
}

bool read_corpus_cache(const std::string& path, uint64_t key, LoadedCorpus& out) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return false;
  auto stale = [&](const char* why) {
    spdlog::warn("ignoring corpus cache {}: {}; rebuilding it", path, why);
    return false;
  };
  struct stat st {};
  Header h{};
  if (::fstat(fileno(f.get()), &st) != 0 || std::fread(&h, sizeof h, 1, f.get()) != 1 ||
      std::memcmp(h.magic, kMagic, 8) != 0)
    return stale("not a heed corpus cache of this version");
  if (h.key != key) return stale("it belongs to other files or settings");
  if (h.token_bytes != 2 && h.token_bytes != 4) return stale("bad token width");
  const uint64_t expected_size = sizeof h + h.pairs * 8 + h.tokens * h.token_bytes;
  if (h.pairs > uint64_t(st.st_size) || h.tokens > uint64_t(st.st_size) || uint64_t(st.st_size) != expected_size)
    return stale("wrong size (truncated?)");

  std::vector<uint32_t> lengths;
  if (!read_array(f.get(), lengths, 2 * h.pairs)) return stale("read error");
  Fnv1a checksum;
  add_bytes(checksum, lengths);
  ParallelCorpus corpus;
  corpus.offsets.resize(2 * h.pairs + 1);
  corpus.offsets[0] = 0;
  for (size_t i = 0; i < lengths.size(); ++i) corpus.offsets[i + 1] = corpus.offsets[i] + lengths[i];
  if (corpus.offsets.back() != h.tokens) return stale("lengths do not add up to the token count");
  if (h.token_bytes == 4) {
    if (!read_array(f.get(), corpus.tokens, h.tokens)) return stale("read error");
    add_bytes(checksum, corpus.tokens);
  } else {  // widened a block at a time: no second copy of the whole corpus in memory
    corpus.tokens.resize(h.tokens);
    std::vector<uint16_t> block;
    for (uint64_t done = 0; done < h.tokens; done += block.size()) {
      if (!read_array(f.get(), block, std::min<uint64_t>(h.tokens - done, 1 << 20))) return stale("read error");
      add_bytes(checksum, block);
      std::copy(block.begin(), block.end(), corpus.tokens.begin() + done);
    }
  }
  // A changed id or swapped lengths pass every check above: the file's bytes must be those written.
  if (checksum.h != h.checksum) return stale("its contents do not match their checksum (damaged)");
  out.corpus = std::move(corpus);
  out.stats = {h.pairs_read, h.kept, h.skipped_empty, h.skipped_too_long, h.skipped_ratio, true};
  return true;
}

void write_corpus_cache(const std::string& path, uint64_t key, const LoadedCorpus& loaded) {
  const ParallelCorpus& c = loaded.corpus;
  const CorpusStats& s = loaded.stats;
  const bool narrow = std::all_of(c.tokens.begin(), c.tokens.end(), [](int32_t id) { return id >= 0 && id < 65536; });
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.key = key;
  h.pairs = c.size();
  h.tokens = c.tokens.size();
  h.token_bytes = narrow ? 2 : 4;
  h.pairs_read = s.pairs_read;
  h.kept = s.kept;
  h.skipped_empty = s.skipped_empty;
  h.skipped_too_long = s.skipped_too_long;
  h.skipped_ratio = s.skipped_ratio;

  std::vector<uint32_t> lengths(c.offsets.size() - 1);
  for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = uint32_t(c.offsets[i + 1] - c.offsets[i]);
  std::vector<uint16_t> narrow_ids;
  if (narrow) narrow_ids.assign(c.tokens.begin(), c.tokens.end());
  Fnv1a checksum;
  add_bytes(checksum, lengths);
  if (narrow)
    add_bytes(checksum, narrow_ids);
  else
    add_bytes(checksum, c.tokens);
  h.checksum = checksum.h;

  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) throw Error("cannot create the corpus cache directory " + parent.string() + ": " + ec.message());
  AtomicFile out(path);
  out.write(&h, sizeof h);
  out.write(lengths.data(), lengths.size() * sizeof(uint32_t));
  if (narrow)
    out.write(narrow_ids.data(), narrow_ids.size() * sizeof(uint16_t));
  else
    out.write(c.tokens.data(), c.tokens.size() * sizeof(int32_t));
  out.commit();
}

}  // namespace heed
