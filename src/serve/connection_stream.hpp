#pragma once
// One connection as httplib reads its requests and writes its answers, with a deadline for each
// request to arrive whole. httplib's own stream times out per read, so a client sending a byte
// every few seconds would hold its io thread, and a drain on SIGTERM, for as long as it liked: in
// its headers, in a body over the limit (which httplib reads to its declared end before the 413),
// or after a 408, when the connection reads on for the next request. Here a read fails once the
// request's deadline has passed; writes keep httplib's per-write timeout.
#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>

namespace heed::serve {

class ConnectionStream : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // `wait`: the longest a single read or write waits for the socket (httplib's timeouts).
  ConnectionStream(int socket, std::chrono::milliseconds read_wait, std::chrono::milliseconds write_wait);

  // Waits up to `idle` for the next request's first bytes, which must then arrive whole within
  // `to_arrive`; false when none came, or when `stopping` is set while none has (no request is
  // in hand then). A client that closed counts as bytes: the request's read then ends it.
  bool next_request(std::chrono::milliseconds idle, std::chrono::milliseconds to_arrive,
                    const std::atomic<bool>& stopping);
  // Ends the connection so that an answer already written reaches the client: no more writes,
  // then what the client still sends is read and dropped until it closes or `linger` has
  // passed (closing on unread bytes would reset the connection, and a reset can overtake the
  // answer), then the socket is closed.
  void close(std::chrono::milliseconds linger);
  // A read failed because the request's deadline had passed: whatever httplib answered, the
  // connection ends (its next bytes are the rest of a request, not a new one).
  bool timed_out() const { return timed_out_; }

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return socket_; }

 private:
  // poll() for `events` up to `limit`, and never past `until`.
  bool wait_for(short events, std::chrono::milliseconds limit, Clock::time_point until) const;

  const int socket_;
  const std::chrono::milliseconds read_wait_, write_wait_;
  Clock::time_point deadline_ = Clock::time_point::max();  // of the request being read
  std::array<char, 4096> buffer_;  // read ahead, as httplib's stream does: its parser reads lines
  size_t begin_ = 0, end_ = 0;
  mutable bool timed_out_ = false;
};

}  // namespace heed::serve
