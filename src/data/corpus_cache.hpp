#pragma once
// The encoded training corpus on disk, so that a run (or a resumed run) does not tokenize the
// same text again. One binary file per key, `<cache_dir>/corpus-<key in hex>.bin`:
//
//   "HEEDCRP2"                          8 bytes, magic + format version
//   key, pairs, tokens                  u64 each (little-endian, as everything below)
//   token_bytes, 0                      u32 each: 2 when every id < 65536, else 4
//   pairs_read, kept, skipped_empty,    u64 each: the CorpusStats of the load that built it
//   skipped_too_long, skipped_ratio
//   checksum                            u64: FNV-1a of the bytes of lengths and ids below
//   lengths                             u32[2 * pairs]: source, target length of each pair
//   ids                                 u16 or i32 [tokens]
//
// The key hashes the format version, every file's path, size and modification time, the
// tokenizers' JSON and the filter settings, so changing any of them selects another file (a
// text edited without changing size or modification time is not noticed: touch it). A file that
// is damaged (its size, counts or checksum) or does not match its key is ignored with a warning
// and rebuilt.
#include <cstdint>
#include <string>
#include <vector>

#include "data/parallel_corpus.hpp"

namespace heed {

uint64_t corpus_cache_key(const std::vector<std::string>& source_files, const std::vector<std::string>& target_files,
                          const Tokenizers& tokenizers, const CorpusFilter& filter);
std::string corpus_cache_path(const std::string& cache_dir, uint64_t key);

// True when `path` holds a valid cache for `key` (then `out` is filled, stats.from_cache set).
bool read_corpus_cache(const std::string& path, uint64_t key, LoadedCorpus& out);
// Written atomically; creates the directory if needed.
void write_corpus_cache(const std::string& path, uint64_t key, const LoadedCorpus& loaded);

}  // namespace heed
