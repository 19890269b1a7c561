#pragma once
// The token ids every layer agrees on: four specials, then the 256 byte tokens, then the learned
// pieces. The tokenizer lays its vocabulary out this way (a static_assert there ties its piece
// names to these ids); batches, the loss, beam search and validation read the ids from here.
#include <cstdint>

namespace heed {

inline constexpr int32_t kPadId = 0, kUnkId = 1, kBosId = 2, kEosId = 3;
inline constexpr int32_t kFirstByteId = 4, kByteTokens = 256;  // byte tokens: ids 4..259
inline constexpr int32_t kFirstLearnedId = kFirstByteId + kByteTokens;

}  // namespace heed
