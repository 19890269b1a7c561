#pragma once
// `heed serve` as one call: the translation service (decoding workers and dynamic batcher), its
// metrics and the HTTP server, started in that order and stopped in the reverse one, so that a
// stop drains: no new connections, requests being handled are answered, then the workers end.
#include <functional>

#include "decode/beam_search.hpp"
#include "models/seq2seq.hpp"
#include "serve/http_server.hpp"
#include "serve/translation_service.hpp"
#include "text/tokenizers.hpp"

namespace heed::serve {

struct ServeOptions {
  ServiceOptions service;
  HttpOptions http;
};

// Serves `model` until stop_requested() is true; on_listening(port) is called once the socket
// listens. Throws heed::Error when the address cannot be bound.
void run_server(Seq2Seq& model, const Tokenizers& tokenizers, const DecodingConfig& defaults,
                const ServeOptions& options, const std::function<void(int port)>& on_listening,
                const std::function<bool()>& stop_requested);

}  // namespace heed::serve
