#include "serve/http_server.hpp"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <atomic>
#include <new>
#include <thread>

#include <nlohmann/json.hpp>

#include "serve/connection_stream.hpp"
#include "serve/page.hpp"
#include "serve/response.hpp"
#include "util/error.hpp"

namespace heed::serve {

// httplib listens with a backlog of 5, compiled into Debian's library: many clients connecting
// at once would lose SYNs and retry a second later. The socket is protected, hence the subclass.
// Not file-local: HttpServer::Impl holds one, and GCC warns of a named class holding a file-local
// type when serve/ is compiled in batches (src/CMakeLists.txt).
class Listener : public httplib::Server {
 public:
  void widen_backlog() { ::listen(svr_sock_.load(), SOMAXCONN); }
  // Ends the accepting, but not the connections already accepted. httplib's stop() marks the
  // socket closed, and its connection loop then drops every connection it has not served yet
  // (those waiting for a free io thread): their requests would go unanswered. A shut-down
  // socket instead fails the blocked accept(); httplib closes it, serves every accepted
  // connection, and listen_after_bind() returns (false) once they are done.
  void stop_accepting() { ::shutdown(svr_sock_.load(), SHUT_RDWR); }

  // Set before listening: from a request's first bytes, the time it has to arrive whole; the
  // server's stop, on which idle connections end at once.
  std::chrono::milliseconds request_time{0};
  const std::atomic<bool>* stopping = nullptr;
  // Set for the calling thread's connection by an answer that says "Connection: close".
  static thread_local bool close_after_answer;

 private:
  // httplib's connection loop (keep-alive requests, then close), on a stream that bounds the
  // time a request takes to arrive (serve/connection_stream.hpp) and that closes as answers say.
  bool process_and_close_socket(socket_t sock) override {
    using std::chrono::seconds;
    ConnectionStream stream(sock, seconds(read_timeout_sec_), seconds(write_timeout_sec_));
    bool served = true;
    for (size_t left = keep_alive_max_count_;
         served && left > 0 && stream.next_request(seconds(keep_alive_timeout_sec_), request_time, *stopping); --left) {
      bool client_closes = false;
      close_after_answer = false;
      served = process_request(stream, left == 1, client_closes, nullptr);
      if (client_closes || close_after_answer || stream.timed_out()) break;
    }
    stream.close(kCloseGrace);
    return served;
  }
  static constexpr std::chrono::seconds kCloseGrace{1};  // for a client to close after its answer
};

thread_local bool Listener::close_after_answer = false;

namespace {

constexpr const char* kJson = "application/json";
constexpr size_t kKeepAliveRequests = 1000;  // per connection, then the client reconnects
constexpr std::chrono::seconds kKeepAlive{5};  // a kept connection's wait for its next request

// The method an endpoint answers, nullptr for a path that is none (its other methods get 405).
const char* allowed_method(const std::string& path) {
  if (path == "/v1/translate") return "POST";
  if (path == "/v1/health" || path == "/metrics" || path == "/") return "GET";
  return nullptr;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

struct HttpServer::Impl {
  TranslationService& service;
  Metrics& metrics;
  HttpOptions options;
  Listener http;
  std::atomic<uint64_t> in_flight{0};
  std::atomic<bool> stopping{false};  // answers say "Connection: close": clients go elsewhere

  Impl(TranslationService& s, Metrics& m, const HttpOptions& o) : service(s), metrics(m), options(o) {
    // A second more than the handler's own deadline, so that a body arriving late is the
    // handler's 408, with an answer, rather than a failed read.
    http.request_time = options.timeout + std::chrono::seconds(1);
    http.stopping = &stopping;
    routes();
  }

  void routes() {
    const int threads = std::max(1, options.io_threads);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // httplib's default options add SO_REUSEPORT, with which a second server on a taken port
    // would bind too and share its connections; SO_REUSEADDR alone lets a restart bind at once.
    http.set_socket_options([](socket_t sock) {
      const int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    http.set_tcp_nodelay(true);  // answers are small: no Nagle delay behind the client's delayed ACK
    http.set_keep_alive_max_count(kKeepAliveRequests);
    http.set_keep_alive_timeout(kKeepAlive.count());
    http.set_payload_max_length(options.max_request_bytes);
    // With a content reader, the body is read here, whatever its Content-Type (httplib would parse
    // a form-encoded one, as curl -d sends, and refuse it beyond 8 KiB).
    http.Post("/v1/translate", [this](const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& content) { translate(req, res, content); });
    http.Get("/v1/translate", [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content(error_body("use POST with a JSON body {\"text\": [...]}"), kJson);
    });
    http.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
      const nlohmann::json body = {{"status", "ok"},
                                   {"model", options.model_name},
                                   {"queue", service.queued_sentences()},
                                   {"requests_in_flight", in_flight.load()}};
      res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), kJson);
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.prometheus(service.queued_sentences(), in_flight.load()),
                      "text/plain; version=0.0.4; charset=utf-8");
    });
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      const std::string_view page = page_html();
      res.set_content(page.data(), page.size(), "text/html; charset=utf-8");
    });
    // Every error answer is JSON: httplib's own (unknown path, body over the limit, a request it
    // cannot parse) get a body here; answers that have one keep it.
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string message = "HTTP status " + std::to_string(res.status);
      const char* allowed = allowed_method(req.path);
      if (res.status == 404 && allowed) {  // a known endpoint, another method
        res.status = 405;
        res.set_header("Allow", allowed);
        message = req.method + " " + req.path + ": method not allowed (use " + allowed + ")";
      } else if (res.status == 404) {
        message = "no such endpoint: " + req.method + " " + req.path +
                  " (endpoints: POST /v1/translate, GET /v1/health, GET /metrics, GET /)";
      } else if (res.status == 413) {
        message = "request body over the limit of " + std::to_string(options.max_request_bytes) + " bytes";
      } else if (res.status == 400) {
        message = "malformed HTTP request";
      }
      res.set_content(error_body(message), kJson);
      if (req.method == "POST" && req.path == "/v1/translate") metrics.request_done(res.status, 0);
    });
    // Stopping: every answer (any endpoint, errors too) asks its client to close the connection,
    // so that none stays for more requests while the server drains.
    http.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
      if (stopping && !res.has_header("Connection")) res.set_header("Connection", "close");
      Listener::close_after_answer = res.get_header_value("Connection") == "close";
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      res.status = 500;
      res.set_content(error_body("internal error"), kJson);
    });
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      spdlog::debug("serve: {} {} {} ({} bytes in, {} out)", req.method, req.path, res.status, req.body.size(),
                    res.body.size());
    });
  }

  // The body, or RequestError: 413 beyond the limit (httplib skips a body whose Content-Length is
  // over it; a chunked one is cut off here), 408 when it is still arriving at `deadline` or the
  // connection's stream gives up on it (see serve/connection_stream.hpp).
  std::string read_body(const httplib::ContentReader& content, httplib::Response& res, Clock::time_point deadline) {
    std::string body;
    bool too_big = false, too_late = false;
    const bool read = content([&](const char* data, size_t length) {
      too_big = body.size() + length > options.max_request_bytes;
      // Late is a client still sending: a body that came in one piece, however late the server
      // read it, goes on (to a 503 if the answer cannot be in time).
      too_late = !body.empty() && Clock::now() > deadline;
      if (!too_big && !too_late) body.append(data, length);
      return !too_big && !too_late;
    });
    if (too_big || res.status == 413) {
      res.set_header("Connection", "close");  // the rest of the body is still on its way
      throw RequestError(413, "",
                         "request body over the limit of " + std::to_string(options.max_request_bytes) + " bytes");
    }
    if (too_late) {
      res.set_header("Connection", "close");
      throw RequestError(408, "",
                         "the request body was still arriving after --timeout-ms (" +
                             std::to_string(options.timeout.count()) + " ms)");
    }
    // The stream's deadline passed (or the client went away, and the answer goes nowhere).
    if (!read)
      throw RequestError(408, "",
                         "the request body did not arrive whole within --timeout-ms (" +
                             std::to_string(options.timeout.count()) + " ms)");
    return body;
  }

  void translate(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& content) {
    const auto start = Clock::now();
    ++in_flight;
    int status = 200;
    std::string body;
    try {
      const TranslateRequest request = parse_translate_request(read_body(content, res, start + options.timeout),
                                                               options.default_beam, options.limits);
      const auto results = service.translate(request, start + options.timeout);
      body =
          translate_response(request, results, service.tokenizers(), options.model_name, seconds_since(start) * 1000);
      uint64_t source_tokens = 0, target_tokens = 0;
      for (const TranslationResult& r : results) {
        source_tokens += r.source_tokens.size();
        target_tokens += r.nbest.front().tokens.size();
      }
      metrics.sentences_done(results.size(), source_tokens, target_tokens);
    } catch (const RequestError& e) {
      status = e.status();
      body = error_body(e.what(), e.field());
    } catch (const std::bad_alloc&) {
      status = 500;
      body = error_body("out of memory");
    } catch (const std::exception& e) {
      status = 500;
      body = error_body(std::string("internal error: ") + e.what());
      spdlog::error("serve: {}", e.what());
    }
    res.status = status;
    res.set_content(body, kJson);
    metrics.request_done(status, seconds_since(start));
    --in_flight;
  }
};

HttpServer::HttpServer(TranslationService& service, Metrics& metrics, const HttpOptions& options)
    : impl_(std::make_unique<Impl>(service, metrics, options)) {}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  const HttpOptions& o = impl_->options;
  const int port =
      o.port == 0 ? impl_->http.bind_to_any_port(o.host) : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw Error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                " (the port is taken, or the host is not an address of this machine)");
  impl_->http.widen_backlog();
  return port;
}

void HttpServer::serve_until(const std::function<bool()>& stop_requested) {
  std::atomic<bool> ended{false};
  std::thread listener([&] {
    if (!impl_->http.listen_after_bind() && !impl_->stopping) spdlog::error("serve: the listening socket failed");
    ended = true;
  });
  while (!ended && !stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  spdlog::info("serve: stopping: no new connections; answering the requests in hand");
  impl_->stopping = true;
  // Once ended, httplib has closed the socket itself (on an accept error), and its number may
  // belong to another file by now. (An accept error at the very moment of a stop request is the
  // one window left: the check and the shutdown are not atomic with httplib's close.)
  if (!ended) impl_->http.stop_accepting();
  listener.join();  // after every accepted connection has been served
}

}  // namespace heed::serve
