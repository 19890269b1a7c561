#pragma once
// Ops over sparse structure: sets of entries grouped by row (CSR), for graphs (a node's
// neighbours) and sparse feature rows. Memory and time are linear in the number of entries;
// nothing here makes a rows × cols matrix. oneDNN has no sparse primitives, so these are our own
// OpenMP loops; each output row is computed by one thread in a fixed order, so the results do
// not depend on the thread count. The patterns are passed by reference and must live until
// backward has run (a graph is built once and used for the whole training run).
#include <cstdint>
#include <utility>
#include <vector>

#include "tensor/autograd.hpp"
#include "tensor/random.hpp"

namespace heed {

// A rows × cols pattern in compressed sparse rows: row i owns entries offsets[i] ..
// offsets[i+1] − 1, entry k sits in column column[k]. For a graph, row i is a node and its
// entries are its neighbours (the keys it attends to); for features, row i is a node and its
// entries its non-zero features. The column-wise index (entries of column c, in row order) is
// built too: backward passes gather along it instead of scattering from several threads.
struct Csr {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> offsets;         // [rows + 1]
  std::vector<int32_t> column;          // [nnz]
  std::vector<int32_t> row;             // [nnz]: the row of each entry
  std::vector<int64_t> column_offsets;  // [cols + 1]
  std::vector<int64_t> by_column;       // [nnz]: entry ids, column after column
  std::vector<int32_t> row_by_column;   // [nnz]: row[by_column[e]], so a column walk reads rows directly
  int64_t nnz() const { return static_cast<int64_t>(column.size()); }
};

// The pattern of (row, column) pairs, any order; duplicates are kept once. Throws heed::Error for
// an index outside rows × cols.
Csr make_csr(int64_t rows, int64_t cols, std::vector<std::pair<int32_t, int32_t>> entries);

// A sparse matrix: a pattern and the value of each entry.
struct SparseRows {
  Csr pattern;
  std::vector<float> values;  // [nnz]
};

// ---- generic pieces (compose them; the fused ops below are tested against them) ----
// x [nnz, H] → softmax over each row's entries, column by column. A row without entries is
// simply absent from the output.
Var segment_softmax(const Var& x, const Csr& sets);
// x [nnz, ...] → [rows, ...]: out[i] = Σ_{k in row i} x[k] (zero for an empty row).
Var segment_sum(const Var& x, const Csr& sets);
// x [N, H, F], w [H, F] → [N, H]: out[n, h] = Σ_f x[n, h, f] · w[h, f] (a per-head dot product).
Var per_head_dot(const Var& x, const Var& w);

// ---- fused ----
// Per-head projection of sparse rows with per-head input dropout (each head draws its own mask
// over the non-zeros: dropping a zero changes nothing, so this is dropout of the dense row):
//   out[n, h, :] = Σ_{k in row n} values[k] · m_h(k) · w[h, column[k], :]
// x [N, Fin] (constant: no gradient flows to it), w [H, Fin, F] → [N, H, F]; m_h(k) = 1 when
// p = 0, else the inverted-dropout factor of element k·H + h of one mask drawn from rng.
Var sparse_multihead_linear(const SparseRows& x, const Var& w, float p, Rng& rng);

// Graph attention (Veličković et al. 2018) over neighbour sets, per head h:
//   e_ij = LeakyReLU(s[i, h] + t[j, h])  for j in row i of `neighbours`
//   α_ij = softmax over j of e_ij,  α̃_ij = dropout_p(α_ij),  out[i, h, :] = Σ_j α̃_ij · values[j, h, :]
// s, t [N, H] (s_i = a₁·Wh_i, t_j = a₂·Wh_j: aᵀ[Wh_i ‖ Wh_j] split in two), values [N, H, F] →
// [N, H, F]. The mask is element k·H + h of one mask drawn from rng, as dropout() of the [nnz, H]
// coefficients would draw it. Memory O(nnz · H): the coefficients and a byte per coefficient for
// the mask are kept for backward. weights_out (optional) receives α [nnz, H] before dropout.
Var graph_attention(const Var& s, const Var& t, const Var& values, const Csr& neighbours, float negative_slope, float p,
                    Rng& rng, Tensor* weights_out = nullptr);

}  // namespace heed
