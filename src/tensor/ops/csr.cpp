// Building a CSR pattern and its column-wise index, in linear time (counting sorts): a graph of
// tens of millions of edges is built in a few passes over them.
#include <algorithm>
#include <string>

#include "tensor/graph_ops.hpp"
#include "util/error.hpp"

namespace heed {

Csr make_csr(int64_t rows, int64_t cols, std::vector<std::pair<int32_t, int32_t>> entries) {
  if (rows < 0 || cols < 0 || rows > INT32_MAX || cols > INT32_MAX)
    throw Error("sparse pattern of " + std::to_string(rows) + " x " + std::to_string(cols));
  Csr c;
  c.rows = rows;
  c.cols = cols;
  std::vector<int64_t> count(rows + 1, 0);
  for (const auto& [r, k] : entries) {
    if (r < 0 || r >= rows || k < 0 || k >= cols)
      throw Error("sparse entry (" + std::to_string(r) + ", " + std::to_string(k) + ") outside " +
                  std::to_string(rows) + " x " + std::to_string(cols));
    ++count[r + 1];
  }
  for (int64_t i = 0; i < rows; ++i) count[i + 1] += count[i];
  std::vector<int32_t> by_row(entries.size());
  {
    std::vector<int64_t> next(count.begin(), count.end() - 1);
    for (const auto& [r, k] : entries) by_row[next[r]++] = k;
  }
  entries.clear();
  entries.shrink_to_fit();
  // Sort and deduplicate each row's columns, compacting in place.
  c.offsets.assign(rows + 1, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < rows; ++i) {
    auto first = by_row.begin() + count[i], last = by_row.begin() + count[i + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    out = std::copy(first, last, by_row.begin() + out) - by_row.begin();
    c.offsets[i + 1] = out;
  }
  by_row.resize(out);
  c.column = std::move(by_row);
  c.row.resize(out);
  for (int64_t i = 0; i < rows; ++i)
    std::fill(c.row.begin() + c.offsets[i], c.row.begin() + c.offsets[i + 1], static_cast<int32_t>(i));
  c.column_offsets.assign(cols + 1, 0);
  for (int32_t k : c.column) ++c.column_offsets[k + 1];
  for (int64_t k = 0; k < cols; ++k) c.column_offsets[k + 1] += c.column_offsets[k];
  c.by_column.resize(out);
  std::vector<int64_t> next(c.column_offsets.begin(), c.column_offsets.end() - 1);
  for (int64_t e = 0; e < out; ++e) c.by_column[next[c.column[e]]++] = e;
  c.row_by_column.resize(out);
  for (int64_t e = 0; e < out; ++e) c.row_by_column[e] = c.row[c.by_column[e]];
  return c;
}

}  // namespace heed
