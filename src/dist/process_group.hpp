#pragma once
// The processes of one data-parallel training run. Started by an MPI launcher (`mpirun -np N`)
// and built with MPI (HEED_MPI), heed joins the job as one of N ranks; otherwise it is the only
// rank and every collective below returns at once. Only the main thread calls these
// (MPI_THREAD_FUNNELED): oneDNN's threads never talk to MPI.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace heed::dist {

// "Open MPI v4.1.4 ..." when built with MPI, "" when not.
std::string mpi_library_version();

// True when an MPI launcher started this process (its environment says so), whether or not this
// build can join the job.
bool launched_by_mpi();

// Joins the MPI job when launched by one; no-op otherwise and when already done. Throws
// heed::Error when launched by mpirun but built without MPI (N copies would each train alone).
void init();
// Leaves the job after a run that succeeded on every rank (collective). No-op when alone.
void finalize();
// Ends every rank of the job at once with this exit code: a rank that failed must not leave the
// others waiting in a collective.
[[noreturn]] void abort(int exit_code);

int rank();  // 0 when alone
int size();  // 1 when alone
inline bool is_root() { return rank() == 0; }

// Element-wise sums over all ranks, in place.
void all_reduce_sum(double* data, size_t n);
void all_reduce_sum(float* data, size_t n);
// Element-wise maxima over all ranks, in place.
void all_reduce_max(double* data, size_t n);
// True on every rank when `value` is the same on every rank.
bool all_equal(uint64_t value);
// Rank `root`'s bytes, on every rank.
std::string broadcast(const std::string& bytes, int root = 0);
void barrier();

// A sum over all ranks started without waiting (MPI_Iallreduce), so it can run while backward
// goes on. test() drives progress and says whether it finished; wait() blocks until it has.
class PendingSum {
 public:
  PendingSum(float* data, size_t n);
  ~PendingSum();  // waits: the buffer must outlive the operation
  PendingSum(const PendingSum&) = delete;
  PendingSum& operator=(const PendingSum&) = delete;
  bool test();
  void wait();

 private:
  struct Request;
  std::unique_ptr<Request> request_;
};

}  // namespace heed::dist
