// The translation service on a real (tiny, random-weight) model: requests from several threads,
// decoded in shared batches by two workers, get exactly what translate_lines gives each line;
// over-long sentences are refused, a passed deadline takes the request's sentences out of the
// queue, and draining answers what is queued before the workers stop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "serve/decode_batch.hpp"
#include "serve/translation_service.hpp"
#include "tiny_model.hpp"

using namespace heed;
using namespace heed::serve;
using namespace heed::test;
using namespace std::chrono_literals;

namespace {

TranslateRequest request_of(std::vector<std::string> text, int beam, int nbest = 1, bool alignment = false) {
  TranslateRequest r;
  r.text = std::move(text);
  r.beam = beam;
  r.nbest = nbest;
  r.alignment = alignment;
  return r;
}

float max_difference(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return 1e9f;
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return 1e9f;
    for (size_t j = 0; j < a[i].size(); ++j) d = std::max(d, std::abs(a[i][j] - b[i][j]));
  }
  return d;
}

// The same translations; the numbers to rounding only: a sentence's other batch members change
// how its products are rounded (translate_lines batches these lines otherwise). Attention rows
// only for a request that asked for alignments.
void check_same(const TranslationResult& got, const TranslationResult& expected, bool alignment = false) {
  CHECK(got.source_tokens == expected.source_tokens);
  REQUIRE(got.nbest.size() == expected.nbest.size());
  for (size_t k = 0; k < got.nbest.size(); ++k) {
    CHECK(got.nbest[k].text == expected.nbest[k].text);
    CHECK(got.nbest[k].tokens == expected.nbest[k].tokens);
    CHECK(got.nbest[k].score == Approx(expected.nbest[k].score).epsilon(1e-5));
    if (alignment)
      CHECK(max_difference(got.nbest[k].attention, expected.nbest[k].attention) < 1e-5f);
    else
      CHECK(got.nbest[k].attention.empty());
  }
}

ServiceOptions never_due() {  // batches go only when full or when draining
  ServiceOptions o;
  o.batching.max_wait = 60s;
  o.batching.lull = 60s;
  o.batching.wait_when_idle = true;
  o.max_sentence_tokens = 1000;
  return o;
}

}  // namespace

TEST_CASE("concurrent requests, batched together by two workers, get translate_lines' results", "[serve]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(36);
  const DecodingConfig defaults = short_search();
  // (beam, nbest) settings the requests take in turn: batches only mix sentences of one setting.
  const std::vector<std::pair<int, int>> settings = {{1, 1}, {3, 1}, {3, 2}};
  std::vector<std::vector<TranslationResult>> expected;
  for (const auto& [beam, nbest] : settings)
    expected.push_back(translate_lines(*model, sample_tokenizers(), lines, request_search(defaults, beam, nbest), {}));

  Metrics metrics;
  ServiceOptions options;
  options.workers = 2;
  options.batching.max_wait = 20ms;
  options.max_sentence_tokens = 1000;
  TranslationService service(*model, sample_tokenizers(), defaults, options, metrics);
  constexpr int kClients = 6;
  std::vector<std::vector<TranslationResult>> got(kClients * 2);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      for (int r = 0; r < 2; ++r) {  // request c*2+r: 3 lines, setting (c+r) % 3
        const int id = c * 2 + r;
        const auto [beam, nbest] = settings[(c + r) % settings.size()];
        got[id] = service.translate(request_of({lines.begin() + 3 * id, lines.begin() + 3 * id + 3}, beam, nbest),
                                    Clock::now() + 60s);
      }
    });
  for (auto& t : clients) t.join();
  for (int id = 0; id < kClients * 2; ++id) {
    const int setting = (id / 2 + id % 2) % settings.size();
    REQUIRE(got[id].size() == 3);
    for (int k = 0; k < 3; ++k) {
      INFO("request " << id << ", line " << 3 * id + k);
      check_same(got[id][k], expected[setting][3 * id + k]);
    }
  }
  const std::string text = metrics.prometheus(0, 0);
  CHECK(text.find("heed_batch_sentences_total 36\n") != std::string::npos);
  // Batched: a request's 3 sentences go out together at least (one batch per sentence: 36).
  const size_t at = text.find("\nheed_batches_total ");
  REQUIRE(at != std::string::npos);
  const int batches = std::stoi(text.substr(at + std::string("\nheed_batches_total ").size()));
  CHECK(batches >= 3);  // three search settings never share a batch
  CHECK(batches <= 12);
}

TEST_CASE("attention rows go only to requests that ask for alignments, also in a shared batch", "[serve]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(4);
  const auto expected = translate_lines(*model, sample_tokenizers(), lines, request_search(short_search(), 2, 1), {});
  REQUIRE_FALSE(expected[0].nbest[0].attention.empty());
  Metrics metrics;
  ServiceOptions options = never_due();  // batches go when draining: both requests in one
  TranslationService service(*model, sample_tokenizers(), short_search(), options, metrics);
  std::vector<TranslationResult> plain, aligned;
  std::string failures;  // Catch's macros are for the test's own thread
  std::mutex failures_mutex;
  auto send = [&](std::vector<TranslationResult>& out, TranslateRequest request) {
    try {
      out = service.translate(request, Clock::now() + 60s);
    } catch (const std::exception& e) {  // e.g. queued after the drain began: out stays empty
      const std::lock_guard<std::mutex> lock(failures_mutex);
      failures += std::string(e.what()) + "\n";
    }
  };
  std::thread a(send, std::ref(plain), request_of({lines[0], lines[1]}, 2));
  std::thread b(send, std::ref(aligned), request_of({lines[2], lines[3]}, 2, 1, true));
  for (const auto start = Clock::now(); service.queued_sentences() < 4 && Clock::now() - start < 60s;)
    std::this_thread::sleep_for(1ms);
  service.drain();
  a.join();
  b.join();
  INFO(failures);
  CHECK(failures.empty());
  CHECK(metrics.prometheus(0, 0).find("heed_batches_total 1\n") != std::string::npos);
  REQUIRE(plain.size() == 2);
  REQUIRE(aligned.size() == 2);
  for (int k = 0; k < 2; ++k) {
    check_same(plain[k], expected[k]);
    check_same(aligned[k], expected[2 + k], true);
  }
}

TEST_CASE("a lone request polls for its translations; with the poll off it sleeps", "[serve]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(2);
  const auto expected = translate_lines(*model, sample_tokenizers(), lines, request_search(short_search(), 2, 1), {});
  for (const bool poll : {true, false}) {
    Metrics metrics;
    ServiceOptions options;
    options.max_sentence_tokens = 1000;
    options.lone_request_spin = poll ? std::chrono::microseconds(60s) : std::chrono::microseconds(0);
    TranslationService service(*model, sample_tokenizers(), short_search(), options, metrics);
    for (int r = 0; r < 2; ++r) {
      const auto got = service.translate(request_of({lines[r]}, 2), Clock::now() + 60s);
      REQUIRE(got.size() == 1);
      check_same(got[0], expected[r]);
    }
    CHECK(service.lone_spin_hits() == (poll ? 2u : 0u));
  }
}

TEST_CASE("a worker that drops its primitives after every batch still translates alike", "[serve]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(12);
  const auto expected = translate_lines(*model, sample_tokenizers(), lines, request_search(short_search(), 2, 1), {});
  Metrics metrics;
  ServiceOptions options;
  options.max_sentence_tokens = 1000;
  options.max_cached_primitives = 0;
  TranslationService service(*model, sample_tokenizers(), short_search(), options, metrics);
  for (size_t i = 0; i < lines.size(); i += 3) {  // four batches, each after a drop
    const auto got = service.translate(request_of({lines.begin() + i, lines.begin() + i + 3}, 2), Clock::now() + 60s);
    for (size_t k = 0; k < 3; ++k) check_same(got[k], expected[i + k]);
  }
}

TEST_CASE("empty sentences are answered without decoding, as translate_lines does", "[serve]") {
  auto model = tiny_gru();
  Metrics metrics;
  TranslationService service(*model, sample_tokenizers(), short_search(), never_due(), metrics);
  const auto results = service.translate(request_of({"", ""}, 2), Clock::now() + 1s);  // would time out if queued
  REQUIRE(results.size() == 2);
  CHECK(results[0].nbest.size() == 1);
  CHECK(results[0].nbest[0].text.empty());
  CHECK(results[0].nbest[0].score == 0);
  CHECK(results[1].source_tokens.empty());
}

TEST_CASE("a sentence over the length limit is refused with 413, naming it", "[serve]") {
  auto model = tiny_gru();
  Metrics metrics;
  ServiceOptions options = never_due();
  options.max_sentence_tokens = 3;
  TranslationService service(*model, sample_tokenizers(), short_search(), options, metrics);
  const std::string long_line = "one two three four";
  const size_t tokens = sample_tokenizers().source().encode(long_line).size();
  REQUIRE(tokens > 3);
  try {
    service.translate(request_of({"a", long_line}, 1), Clock::now() + 1s);
    FAIL("accepted");
  } catch (const RequestError& e) {
    CHECK(e.status() == 413);
    CHECK(e.field() == "text[1]");
    CHECK(std::string(e.what()) == "text[1]: " + std::to_string(tokens) + " tokens, over the limit of 3 per sentence");
  }
  CHECK(service.queued_sentences() == 0);
}

TEST_CASE("a sentence with more bytes than its tokens could hold is refused untokenized", "[serve]") {
  auto model = tiny_gru();
  Metrics metrics;
  ServiceOptions options = never_due();
  options.max_sentence_tokens = 3;
  TranslationService service(*model, sample_tokenizers(), short_search(), options, metrics);
  const Tokenizer& source = sample_tokenizers().source();
  size_t longest = 1;
  for (int id = 0; id < source.vocab_size(); ++id) longest = std::max(longest, source.piece(id).size());
  auto refusal = [&](const std::string& line) {
    try {
      service.translate(request_of({line}, 1), Clock::now() + 1s);
    } catch (const RequestError& e) {
      CHECK(e.status() == 413);
      CHECK(e.field() == "text[0]");
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // At the bound the sentence is tokenized (and its tokens refused); one byte more is refused as
  // it stands. Spaces do not count.
  const std::string at_bound(3 * longest, 'q');
  const std::string spaced = at_bound.substr(0, longest) + "   " + at_bound.substr(longest);
  const std::string over(3 * longest + 1, 'q');
  auto tokens_message = [&](const std::string& line) {
    return std::to_string(source.encode(line).size()) + " tokens, over the limit";
  };
  CHECK_THAT(refusal(at_bound), Catch::Contains(tokens_message(at_bound)));
  CHECK_THAT(refusal(spaced), Catch::Contains(tokens_message(spaced)));
  CHECK(refusal(over) == "text[0]: " + std::to_string(3 * longest + 1) +
                             " bytes other than spaces, more than 3 tokens " + "hold (at most " +
                             std::to_string(longest) + " bytes each): over the limit of 3 per sentence");
  CHECK(service.queued_sentences() == 0);
}

TEST_CASE("a request whose deadline passes gets 503 and leaves the queue", "[serve]") {
  auto model = tiny_gru();
  Metrics metrics;
  TranslationService service(*model, sample_tokenizers(), short_search(), never_due(), metrics);
  const auto start = Clock::now();
  try {
    service.translate(request_of({"Hello world", "Open the file"}, 2), Clock::now() + 100ms);
    FAIL("answered");
  } catch (const RequestError& e) {
    CHECK(e.status() == 503);
    CHECK(e.field().empty());
    CHECK(std::string(e.what()) == "the request timed out before its sentences were translated");
  }
  CHECK(Clock::now() - start >= 100ms);
  CHECK(service.queued_sentences() == 0);
}

TEST_CASE("draining decodes what is queued, then refuses new requests", "[serve]") {
  auto model = tiny_gru();
  const auto lines = sample_lines(5);
  const auto expected = translate_lines(*model, sample_tokenizers(), lines, request_search(short_search(), 2, 1), {});
  Metrics metrics;
  TranslationService service(*model, sample_tokenizers(), short_search(), never_due(), metrics);
  std::vector<TranslationResult> got;
  std::thread client([&] { got = service.translate(request_of(lines, 2), Clock::now() + 60s); });
  while (service.queued_sentences() < lines.size()) std::this_thread::sleep_for(1ms);
  service.drain();  // the batch would otherwise wait a minute
  client.join();
  REQUIRE(got.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) check_same(got[i], expected[i]);
  try {
    service.translate(request_of({"late"}, 1), Clock::now() + 1s);
    FAIL("answered");
  } catch (const RequestError& e) {
    CHECK(e.status() == 503);
    CHECK(std::string(e.what()) == "the server is shutting down");
  }
}
