#include "dist/process_group.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/error.hpp"

#ifdef HEED_MPI
#include <mpi.h>
#endif

namespace heed::dist {

bool launched_by_mpi() {
  // Open MPI's launcher sets the first, PMIx-based launchers (Slurm, MPICH's hydra) the others.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

#ifdef HEED_MPI
namespace {
bool g_joined = false;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(what) + ": " + std::string(text, length));
}
}  // namespace

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, length);
  if (const auto end = version.find_first_of(",\n"); end != std::string::npos) version.resize(end);
  return version;
}

void init() {
  if (g_joined || !launched_by_mpi()) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (and become heed::Error) instead of ending the process silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_joined = true;
}

void finalize() {
  if (!g_joined) return;
  g_joined = false;
  MPI_Finalize();
}

void abort(int exit_code) {
  if (g_joined) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

int rank() {
  int r = 0;
  if (g_joined) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int n = 1;
  if (g_joined) MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void all_reduce_sum(double* data, size_t n) {
  if (size() > 1)
    check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}

void all_reduce_sum(float* data, size_t n) {
  if (size() > 1)
    check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}

void all_reduce_max(double* data, size_t n) {
  if (size() > 1)
    check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
}

bool all_equal(uint64_t value) {
  if (size() == 1) return true;
  uint64_t extremes[2] = {value, ~value};  // max of value and of its complement: max and min
  check(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return extremes[0] == ~extremes[1];
}

std::string broadcast(const std::string& bytes, int root) {
  if (size() == 1) return bytes;
  uint64_t length = bytes.size();
  check(MPI_Bcast(&length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank() == root ? bytes : std::string(length, '\0');
  for (uint64_t done = 0; done < length;) {  // MPI counts are int: large texts go in pieces
    const int piece = static_cast<int>(std::min<uint64_t>(length - done, 1u << 30));
    check(MPI_Bcast(out.data() + done, piece, MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
    done += piece;
  }
  return out;
}

void barrier() {
  if (size() > 1) check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

struct PendingSum::Request {
  MPI_Request handle = MPI_REQUEST_NULL;
};

PendingSum::PendingSum(float* data, size_t n) : request_(std::make_unique<Request>()) {
  if (size() > 1)
    check(
        MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request_->handle),
        "MPI_Iallreduce");
}

PendingSum::~PendingSum() {
  if (request_->handle != MPI_REQUEST_NULL) MPI_Wait(&request_->handle, MPI_STATUS_IGNORE);
}

bool PendingSum::test() {
  if (request_->handle == MPI_REQUEST_NULL) return true;
  int done = 0;
  check(MPI_Test(&request_->handle, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void PendingSum::wait() {
  if (request_->handle != MPI_REQUEST_NULL) check(MPI_Wait(&request_->handle, MPI_STATUS_IGNORE), "MPI_Wait");
}

#else  // built without MPI: always alone

std::string mpi_library_version() { return ""; }
void init() {
  if (launched_by_mpi())
    throw UsageError(
        "started by an MPI launcher, but this heed was built without MPI (heed --version): "
        "install libopenmpi-dev and rebuild, or run heed without mpirun");
}
void finalize() {}
void abort(int exit_code) { std::_Exit(exit_code); }
int rank() { return 0; }
int size() { return 1; }
void all_reduce_sum(double*, size_t) {}
void all_reduce_sum(float*, size_t) {}
void all_reduce_max(double*, size_t) {}
bool all_equal(uint64_t) { return true; }
std::string broadcast(const std::string& bytes, int) { return bytes; }
void barrier() {}

struct PendingSum::Request {};
PendingSum::PendingSum(float*, size_t) {}
PendingSum::~PendingSum() = default;
bool PendingSum::test() { return true; }
void PendingSum::wait() {}

#endif

}  // namespace heed::dist
