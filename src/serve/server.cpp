#include "serve/server.hpp"

#include <spdlog/spdlog.h>

#include "serve/metrics.hpp"

namespace heed::serve {

void run_server(Seq2Seq& model, const Tokenizers& tokenizers, const DecodingConfig& defaults,
                const ServeOptions& options, const std::function<void(int port)>& on_listening,
                const std::function<bool()>& stop_requested) {
  Metrics metrics;
  TranslationService service(model, tokenizers, defaults, options.service, metrics);
  HttpServer http(service, metrics, options.http);
  const int port = http.bind();
  on_listening(port);
  http.serve_until(stop_requested);
  service.drain();
}

}  // namespace heed::serve
