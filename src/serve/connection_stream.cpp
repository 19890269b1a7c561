#include "serve/connection_stream.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace heed::serve {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLookEvery{100};  // how soon an idle connection notices a stop

// The address and port of a socket's end, as getsockname/getpeername give it.
template <typename Get>
void address_of(int socket, Get get, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  ip.clear();
  port = 0;
  if (get(socket, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

}  // namespace

ConnectionStream::ConnectionStream(int socket, milliseconds read_wait, milliseconds write_wait)
    : socket_(socket), read_wait_(read_wait), write_wait_(write_wait) {}

bool ConnectionStream::wait_for(short events, milliseconds limit, Clock::time_point until) const {
  const auto end = std::min(until, Clock::now() + limit);
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(end - Clock::now());
    if (left.count() < 0) return false;
    pollfd p{socket_, events, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready > 0) return true;
    if (ready == 0) {
      if (Clock::now() >= end) return false;
      continue;  // woke a little early
    }
    if (errno != EINTR) return false;
  }
}

bool ConnectionStream::next_request(milliseconds idle, milliseconds to_arrive, const std::atomic<bool>& stopping) {
  deadline_ = Clock::time_point::max();
  const auto until = Clock::now() + idle;
  bool came = begin_ < end_;  // pipelined behind the last request
  while (!came) {
    came = wait_for(POLLIN, milliseconds(0), until);
    if (came || stopping || Clock::now() >= until) break;
    came = wait_for(POLLIN, kLookEvery, until);
  }
  if (came) deadline_ = Clock::now() + to_arrive;
  return came;
}

bool ConnectionStream::is_readable() const {
  if (begin_ < end_ || wait_for(POLLIN, read_wait_, deadline_)) return true;
  timed_out_ = timed_out_ || Clock::now() >= deadline_;
  return false;
}

bool ConnectionStream::is_writable() const { return wait_for(POLLOUT, write_wait_, Clock::time_point::max()); }

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (begin_ == end_) {
    if (!is_readable()) return -1;
    ssize_t n;
    do {
      n = ::recv(socket_, buffer_.data(), buffer_.size(), 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    begin_ = 0;
    end_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, end_ - begin_);
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do {
    n = ::send(socket_, ptr, size, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n;
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  address_of(socket_, ::getpeername, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  address_of(socket_, ::getsockname, ip, port);
}

void ConnectionStream::close(milliseconds linger) {
  ::shutdown(socket_, SHUT_WR);
  const auto until = Clock::now() + linger;
  char dropped[4096];
  while (wait_for(POLLIN, linger, until) && ::recv(socket_, dropped, sizeof dropped, 0) > 0) {
  }
  ::close(socket_);
}

}  // namespace heed::serve
