#pragma once
// The HTTP face of the server (cpp-httplib), which stays out of this header:
//   POST /v1/translate   see request.hpp / response.hpp
//   GET  /v1/health      {"status": "ok", "model": ..., "queue": N}
//   GET  /metrics        Prometheus text (metrics.hpp)
//   GET  /               the page (page.hpp)
// Errors of every kind are JSON {"error": ..., "field": ...} with the status code.
// Connections are served by `io_threads` threads, which mostly wait (on the network or on the
// decoding workers); a connection beyond them waits its turn.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "serve/metrics.hpp"
#include "serve/request.hpp"
#include "serve/translation_service.hpp"

namespace heed::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0: any free port
  size_t max_request_bytes = 1 << 20;  // request bodies over it: 413
  RequestLimits limits;
  int default_beam = 5;                      // when a request gives none
  std::chrono::milliseconds timeout{30000};  // from a request's arrival to its answer: 503 after
  int io_threads = 64;
  std::string model_name;  // the "model" of answers
};

class HttpServer {
 public:
  HttpServer(TranslationService& service, Metrics& metrics, const HttpOptions& options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Opens the listening socket; returns its port. Throws heed::Error when it cannot.
  int bind();
  // Serves until stop_requested() (polled every 20 ms) is true, then stops taking connections
  // and returns once every connection taken has been served: the requests being handled and
  // those waiting for an io thread are answered (with "Connection: close"), none is dropped.
  void serve_until(const std::function<bool()>& stop_requested);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace heed::serve
