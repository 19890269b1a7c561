#pragma once
// Private to tensor/ops: splitting a row count into pieces whose sizes come from a bounded set.
// Ops whose oneDNN primitives need exact shapes see a new row count at nearly every decoding step
// (beams finish, batches differ): a server would create primitives without end, and dropping and
// re-creating them fragments its heap. Row-independent ops run their rows in pieces instead:
// M = 256·a + 16·b + r (r < 16), at most 31 row counts in all and, below 256 rows, two calls.
#include <cstdint>

namespace heed {

inline constexpr int64_t kLargeRowPiece = 256;
inline constexpr int64_t kRowPieceStep = 16;

// run(first_row, rows) for each piece, in order.
template <class Run>
void for_row_pieces(int64_t M, Run&& run) {
  int64_t r0 = 0;
  for (; M - r0 >= kLargeRowPiece; r0 += kLargeRowPiece) run(r0, kLargeRowPiece);
  const int64_t steps = (M - r0) / kRowPieceStep * kRowPieceStep;
  if (steps > 0) run(r0, steps);
  if (r0 + steps < M) run(r0 + steps, M - r0 - steps);
}

}  // namespace heed
