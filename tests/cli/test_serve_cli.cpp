// heed serve as a client sees it: a real server on a free loopback port, answers equal to
// `heed translate` for the same lines (alone, concurrent, n-best and alignments), refused
// requests with their status codes and fields, the metrics counters, the page, the per-request
// timeout, slow clients cut off, and SIGTERM, which answers the requests in hand and those waiting for an io thread
// before exiting 0. The model is the tiny random-weight GRU of model_fixture.hpp (outputs
// arbitrary but deterministic).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <thread>

#include "serve_fixture.hpp"

using namespace heed::test;
using nlohmann::json;

namespace {

const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string d = "serve_cli";
    fs::remove_all(d);
    return make_tiny_model_dir(d + "/model");
  }();
  return dir;
}

std::string scratch(const std::string& name) { return "serve_cli/" + name; }

std::vector<std::string> texts(const json& translations) {
  std::vector<std::string> out;
  for (const auto& t : translations) out.push_back(one_line(t.get<std::string>()));
  return out;
}

std::string format_score(double score) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<float>(score));
  return buf;
}

// What a slow (or hostile) client saw: the first bytes of the server's answer ("" when none
// came), when they came and when the server closed the connection (seconds after connecting;
// -1 when it did not).
struct Trickled {
  std::string answer;
  double answered = -1, closed = -1;
};

// Connects on a raw socket, sends `head`, then one byte of `body` per `gap` (and goes on sending
// bytes after any answer, as a client that ignores it), reading what comes back, until the
// server closes the connection or `limit` seconds have passed.
Trickled trickle(int port, const std::string& head, const std::string& body, std::chrono::milliseconds gap,
                 double limit) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  REQUIRE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));
  Trickled t;
  char buffer[256];
  for (size_t i = 0; seconds() < limit; ++i) {
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0 && t.answered < 0) {
      t.answer.assign(buffer, static_cast<size_t>(got));
      t.answered = seconds();
    }
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
        ::send(fd, &body[i % body.size()], 1, MSG_NOSIGNAL) != 1) {
      t.closed = seconds();
      break;
    }
    std::this_thread::sleep_for(gap);
  }
  ::close(fd);
  return t;
}

std::string post_head(size_t content_length) {
  return "POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(content_length) + "\r\n\r\n";
}

}  // namespace

TEST_CASE("serve: translations equal heed translate's for the same lines", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("same"));
  REQUIRE(server.port() > 0);
  std::vector<std::string> lines = sample_lines(0, 12);
  lines.insert(lines.begin() + 3, "");  // an empty line stays empty, as in translate

  SECTION("the model's beam") {
    const Answer a = post(server, json{{"text", lines}});
    REQUIRE(a.status == 200);
    CHECK(a.body["model"] == "model");
    CHECK(a.body["time_ms"].get<double>() > 0);
    const auto expected = translate_offline(model_dir(), lines, "", scratch("same-default"));
    REQUIRE(expected.size() == lines.size());
    CHECK(texts(a.body["translations"]) == expected);
    CHECK(a.body["translations"][3] == "");
  }
  SECTION("beam 3, greedy") {
    for (int beam : {3, 1}) {
      const Answer a = post(server, json{{"text", lines}, {"beam", beam}});
      REQUIRE(a.status == 200);
      CHECK(texts(a.body["translations"]) ==
            translate_offline(model_dir(), lines, "--beam " + std::to_string(beam), scratch("same-beam")));
    }
  }
  SECTION("n-best lists with scores and alignments, as translate --nbest --alignment writes them") {
    const Answer a = post(server, json{{"text", lines}, {"beam", 3}, {"nbest", 2}, {"alignment", true}});
    REQUIRE(a.status == 200);
    const auto expected =
        translate_offline(model_dir(), lines, "--beam 3 --nbest 2 --alignment", scratch("same-nbest"));
    std::vector<std::string> got;
    for (size_t i = 0; i < lines.size(); ++i)
      for (const auto& h : a.body["translations"][i])
        got.push_back(std::to_string(i) + " ||| " + one_line(h["text"]) + " ||| " + format_score(h["score"]) + " ||| " +
                      h["alignment"].get<std::string>());
    CHECK(got == expected);
    CHECK(a.body["translations"][0].size() == 2);
  }
  SECTION("alignment alone: one entry per line") {
    const Answer a = post(server, json{{"text", {lines[0]}}, {"alignment", true}});
    REQUIRE(a.status == 200);
    REQUIRE(a.body["translations"][0].size() == 1);
    const auto expected = translate_offline(model_dir(), {lines[0]}, "--scores --alignment", scratch("same-align"));
    const json& h = a.body["translations"][0][0];
    CHECK(one_line(h["text"]) + " ||| " + format_score(h["score"]) + " ||| " + format_score(h["log_prob"]) + " ||| " +
              h["alignment"].get<std::string>() ==
          expected.at(0));
  }
  CHECK(server.stop() == 0);
}

TEST_CASE("serve -m A -m B: an ensemble answers as translate's ensemble does", "[cli][serve][ensemble]") {
  static const std::string transformer = make_tiny_model_dir("serve_cli/transformer", heed::Arch::transformer);
  ServerProcess server(model_dir(), scratch("ensemble"), {"-m", transformer});
  REQUIRE(server.port() > 0);
  const std::vector<std::string> lines = sample_lines(0, 8);
  const Answer a = post(server, json{{"text", lines}, {"beam", 3}});
  REQUIRE(a.status == 200);
  CHECK(a.body["model"] == "model+transformer");
  CHECK(texts(a.body["translations"]) ==
        translate_offline(model_dir(), lines, "-m " + transformer + " --beam 3", scratch("ensemble-offline")));
  CHECK(server.log().find("ensemble of") != std::string::npos);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: concurrent requests each get their own lines' translations; counters add up", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("concurrent"));
  REQUIRE(server.port() > 0);
  const std::vector<std::string> lines = sample_lines(20, 48);
  const auto expected = translate_offline(model_dir(), lines, "", scratch("concurrent"));
  REQUIRE(expected.size() == lines.size());

  // 8 clients at once, 4 requests each, of 1 to 3 lines (48 lines in all, each sent once).
  constexpr int kClients = 8, kRequests = 4;
  std::vector<std::vector<std::string>> mismatches(kClients);
  std::vector<std::vector<std::string>> failures(kClients);
  std::vector<std::thread> clients;
  size_t next = 0, sentences = 0;
  std::vector<std::vector<std::pair<size_t, size_t>>> plan(kClients);  // (first line, count)
  for (int r = 0; r < kRequests; ++r)
    for (int c = 0; c < kClients; ++c) {
      const size_t count = 1 + (c + r) % 3;
      plan[c].emplace_back(next % lines.size(), std::min(count, lines.size() - next % lines.size()));
      sentences += plan[c].back().second;
      next += count;
    }
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      for (const auto& [first, count] : plan[c]) {
        const std::vector<std::string> mine(lines.begin() + first, lines.begin() + first + count);
        const Answer a = post(server, json{{"text", mine}});
        if (a.status != 200) {
          failures[c].push_back(std::to_string(a.status) + " " + a.raw);
          continue;
        }
        const auto got = texts(a.body["translations"]);
        for (size_t k = 0; k < count; ++k)
          if (got.at(k) != expected[first + k]) mismatches[c].push_back(mine[k]);
      }
    });
  for (auto& t : clients) t.join();
  for (int c = 0; c < kClients; ++c) {
    INFO("client " << c);
    CHECK(failures[c] == std::vector<std::string>{});
    CHECK(mismatches[c].empty());
  }
  CHECK(metric(server, "heed_requests_total{status=\"200\"}") == kClients * kRequests);
  CHECK(metric(server, "heed_sentences_total") == double(sentences));
  CHECK(metric(server, "heed_batch_sentences_total") == double(sentences));  // no empty lines among them
  CHECK(metric(server, "heed_request_duration_seconds_count") == kClients * kRequests);
  CHECK(metric(server, "heed_request_duration_seconds_bucket{le=\"+Inf\"}") == kClients * kRequests);
  CHECK(metric(server, "heed_queue_sentences") == 0);
  CHECK(metric(server, "heed_requests_in_flight") == 0);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: bad requests get 400/413 with a JSON error naming the field; the server carries on", "[cli][serve]") {
  ServerProcess server(
      model_dir(), scratch("bad"),
      {"--max-request-bytes", "2000", "--max-sentences", "3", "--max-sentence-length", "8", "--max-beam", "6"});
  REQUIRE(server.port() > 0);
  struct Case {
    std::string body;
    int status;
    std::string field, message;
  };
  const std::vector<Case> cases = {
      {R"({"text": ["a"})", 400, "", "malformed JSON"},
      {"{\"text\": [\"\xff\"]}", 400, "", "malformed JSON"},  // not UTF-8
      {"", 400, "", "malformed JSON"},
      {R"(["a"])", 400, "", "must be a JSON object, got array"},
      {R"({})", 400, "text", "text: missing"},
      {R"({"text": "a"})", 400, "text", "text: must be an array of strings, got string"},
      {R"({"text": ["a", 7]})", 400, "text[1]", "text[1]: must be a string, got number"},
      {R"({"text": ["a"], "beam": 0})", 400, "beam", "beam: must be an integer from 1 to 6, got 0"},
      {R"({"text": ["a"], "beam": 7})", 400, "beam", "beam: must be an integer from 1 to 6, got 7"},
      {R"({"text": ["a"], "beam": "2"})", 400, "beam", "beam: must be an integer from 1 to 6, got \"2\""},
      {R"({"text": ["a"], "beam": 2.5})", 400, "beam", "got 2.5"},
      {R"({"text": ["a"], "beam": 2, "nbest": 3})", 400, "nbest",
       "nbest: must be an integer from 1 to the beam size 2, got 3"},
      {R"({"text": ["a"], "alignment": "yes"})", 400, "alignment", "alignment: must be true or false, got \"yes\""},
      {R"({"text": ["a"], "bem": 2})", 400, "bem", "unknown field 'bem'"},
      {R"({"text": ["a", "b", "c", "d"]})", 413, "text", "text: 4 sentences, over the limit of 3 per request"},
      {R"({"text": ["a", "one two three four five six seven eight nine ten"]})", 413, "text[1]", "per sentence"},
      {"{\"text\": [\"" + std::string(2100, 'a') + "\"]}", 413, "", "request body over the limit of 2000 bytes"},
  };
  int status_400 = 0, status_413 = 0;
  for (const Case& c : cases) {
    INFO(c.body.substr(0, 80));
    const Answer a = post(server, c.body);
    CHECK(a.status == c.status);
    REQUIRE(a.body.is_object());
    CHECK(a.body["error"].get<std::string>().find(c.message) != std::string::npos);
    if (c.field.empty())
      CHECK_FALSE(a.body.contains("field"));
    else
      CHECK(a.body["field"] == c.field);
    (c.status == 400 ? status_400 : status_413) += 1;
  }
  // A form-encoded body (curl -d) is read as JSON all the same, whatever its size.
  {
    auto client = server.client();
    const Answer a =
        to_answer(client.Post("/v1/translate", R"({"text": ["one", "two"]})", "application/x-www-form-urlencoded"));
    CHECK(a.status == 200);
    CHECK(a.body["translations"].size() == 2);
  }
  const Answer wrong_method = get(server, "/v1/translate");
  CHECK(wrong_method.status == 405);
  CHECK(wrong_method.body["error"].get<std::string>().find("POST") != std::string::npos);
  {  // a known endpoint asked with another method: 405 naming the one it takes
    auto client = server.client();
    const auto put = client.Put("/v1/translate", R"({"text": ["one"]})", "application/json");
    REQUIRE(put);
    CHECK(put->status == 405);
    CHECK(put->get_header_value("Allow") == "POST");
    CHECK_THAT(put->body, Catch::Contains("PUT /v1/translate: method not allowed (use POST)"));
    const auto post_health = client.Post("/v1/health", "{}", "application/json");
    REQUIRE(post_health);
    CHECK(post_health->status == 405);
    CHECK(post_health->get_header_value("Allow") == "GET");
  }
  const Answer missing = get(server, "/v1/nothing");
  CHECK(missing.status == 404);
  CHECK(missing.body["error"].get<std::string>().find("no such endpoint: GET /v1/nothing") != std::string::npos);

  const Answer health = get(server, "/v1/health");
  CHECK(health.status == 200);
  CHECK(health.body["status"] == "ok");
  CHECK(metric(server, "heed_requests_total{status=\"400\"}") == status_400);
  CHECK(metric(server, "heed_requests_total{status=\"413\"}") == status_413);
  CHECK(metric(server, "heed_requests_total{status=\"200\"}") == 1);
  CHECK(metric(server, "heed_request_duration_seconds_count") == status_400 + status_413 + 1);
  CHECK(metric(server, "heed_sentences_total") == 2);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: sentences longer than the model's positions get 413, whatever --max-sentence-length says",
          "[cli][serve]") {
  static const std::string transformer = make_tiny_model_dir("serve_cli/positions", heed::Arch::transformer);
  ServerProcess server(transformer, scratch("positions"),
                       {"--max-sentence-length", "5000", "--max-request-bytes", "100000"});
  REQUIRE(server.port() > 0);
  // 1,023 source tokens and </s> fill the 1,024 positions; 1,100 words were a 500 for the batch.
  std::string words;
  for (int i = 0; i < 1100; ++i) words += "a ";
  const Answer a = post(server, json{{"text", json::array({"one", words})}});
  CHECK(a.status == 413);
  CHECK(a.body["field"] == "text[1]");
  CHECK_THAT(a.body["error"].get<std::string>(), Catch::Contains("over the limit of 1023 per sentence"));
  CHECK(post(server, json{{"text", json::array({"one"})}}).status == 200);
  CHECK(server.stop() == 0);
  CHECK_THAT(server.log(), Catch::Contains("the model takes sentences of up to 1023 source tokens, not 5000"));
}

TEST_CASE("serve: a body still arriving after --timeout-ms gets 408, then the connection closes", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("slow-body"), {"--timeout-ms", "1000"});
  REQUIRE(server.port() > 0);
  // 58 bytes, one per 100 ms: almost 6 s unless cut off after the first second.
  const std::string body = R"({"text": ["one two three four five six seven eight nine"]})";
  REQUIRE(body.size() == 58);
  const Trickled t = trickle(server.port(), post_head(body.size()), body, std::chrono::milliseconds(100), 15);
  INFO(t.answer);
  CHECK_THAT(t.answer, Catch::StartsWith("HTTP/1.1 408"));
  CHECK(t.answered < 3);
  // The client sends on: the server closes the connection a second after its answer (it does
  // not read the rest as the next request).
  CHECK(t.closed >= t.answered);
  CHECK(t.closed < t.answered + 3);
  CHECK(post(server, json{{"text", json::array({"one"})}}).status == 200);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: a client that never finishes its request is cut off, and does not hold up a stop", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("slow-client"), {"--timeout-ms", "1000"});
  REQUIRE(server.port() > 0);
  // A body declared over the limit, sent a byte per 100 ms (httplib reads such a body to its end
  // before the 413), and headers that never end: each has --timeout-ms and a second.
  const Trickled over = trickle(server.port(), post_head(100000000000), "x", std::chrono::milliseconds(100), 15);
  INFO(over.answer);
  CHECK(over.closed > 1);
  CHECK(over.closed < 5);
  const Trickled headers =
      trickle(server.port(), "POST /v1/translate HTTP/1.1\r\n", "X-Slow: a\r\n", std::chrono::milliseconds(100), 15);
  CHECK(headers.closed > 1);
  CHECK(headers.closed < 5);
  CHECK(post(server, json{{"text", json::array({"one"})}}).status == 200);

  // SIGTERM while one such client sends and another connection is kept idle: the stop waits for
  // neither beyond those bounds.
  std::thread slow([&] { trickle(server.port(), post_head(100000000000), "x", std::chrono::milliseconds(100), 15); });
  httplib::Client idle = server.client();
  idle.set_keep_alive(true);
  REQUIRE(idle.Get("/v1/health"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto stopping = std::chrono::steady_clock::now();
  CHECK(server.stop() == 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopping).count();
  CHECK(seconds < 8);
  slow.join();
}

TEST_CASE("serve: a request not answered within --timeout-ms gets 503", "[cli][serve]") {
  // Decoding 20 sentences takes longer than 1 ms.
  ServerProcess server(model_dir(), scratch("timeout"), {"--timeout-ms", "1"});
  REQUIRE(server.port() > 0);
  const Answer a = post(server, json{{"text", sample_lines(0, 20)}});
  CHECK(a.status == 503);
  CHECK(a.body["error"].get<std::string>().find("timed out") != std::string::npos);
  const Answer empty = post(server, json{{"text", json::array({""})}});  // nothing to decode: no wait
  CHECK(empty.status == 200);
  CHECK(get(server, "/v1/health").status == 200);
  CHECK(metric(server, "heed_requests_total{status=\"503\"}") == 1);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: SIGTERM stops new connections but answers the request in hand, then exits 0", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("drain"), {"--max-sentences", "2000", "--max-batch-tokens", "200"});
  REQUIRE(server.port() > 0);
  const std::vector<std::string> lines = sample_lines(0, 700);
  Answer answer;
  std::thread client([&] { answer = post(server, json{{"text", lines}, {"beam", 2}}); });
  // Signal while sentences of the request are still waiting for a worker.
  double queued = 0;
  for (int i = 0; i < 20000 && queued <= 0; ++i) {
    queued = metric(server, "heed_queue_sentences");
    if (queued <= 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK(queued > 0);
  ::kill(server.pid(), SIGTERM);
  // The listening socket closes within the 20 ms the server takes to notice the signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(get(server, "/v1/health").status == 0);  // no connection
  client.join();
  REQUIRE(answer.status == 200);
  CHECK(texts(answer.body["translations"]) == translate_offline(model_dir(), lines, "--beam 2", scratch("drain")));
  CHECK(server.stop() == 0);
  CHECK(server.log().find("serve: stopping") != std::string::npos);
}

TEST_CASE("serve: SIGTERM answers a request still waiting for an io thread too", "[cli][serve]") {
  // One io thread: while it handles the long request, the short one's connection waits its turn.
  ServerProcess server(model_dir(), scratch("drain_queued"),
                       {"--io-threads", "1", "--max-sentences", "2000", "--max-batch-tokens", "200"});
  REQUIRE(server.port() > 0);
  std::vector<std::string> lines;
  while (lines.size() < 2000) {
    const std::vector<std::string> sample = sample_lines(0, 2000 - lines.size());
    lines.insert(lines.end(), sample.begin(), sample.end());
  }
  Answer long_answer, short_answer;
  const auto sent = std::chrono::steady_clock::now();
  std::thread long_client([&] { long_answer = post(server, json{{"text", lines}, {"beam", 4}}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread short_client([&] { short_answer = post(server, json{{"text", json::array({"one"})}, {"beam", 2}}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(server.pid(), SIGTERM);
  const double signalled_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  long_client.join();
  short_client.join();
  REQUIRE(long_answer.status == 200);
  // The scene the test is about: the long request was still being decoded at the signal.
  REQUIRE(long_answer.body["time_ms"].get<double>() > signalled_ms - 100);
  CHECK(texts(long_answer.body["translations"]) ==
        translate_offline(model_dir(), lines, "--beam 4", scratch("drain_queued")));
  CHECK(short_answer.status == 200);
  CHECK(texts(short_answer.body["translations"]) ==
        translate_offline(model_dir(), {"one"}, "--beam 2", scratch("drain_queued_short")));
  CHECK(server.stop() == 0);
  CHECK(server.log().find("error") == std::string::npos);
}

TEST_CASE("serve: health, metrics and the page", "[cli][serve]") {
  ServerProcess server(model_dir(), scratch("pages"));
  REQUIRE(server.port() > 0);
  const Answer health = get(server, "/v1/health");
  CHECK(health.status == 200);
  CHECK(health.body == json{{"status", "ok"}, {"model", "model"}, {"queue", 0}, {"requests_in_flight", 0}});

  auto client = server.client();
  const auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(metrics->body.find("# TYPE heed_request_duration_seconds histogram\n") != std::string::npos);
  CHECK(metric(server, "heed_requests_total{status=\"200\"}") == 0);

  const auto page = client.Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK(page->get_header_value("Content-Type") == "text/html; charset=utf-8");
  CHECK(page->body.find("<textarea id=\"src\"") != std::string::npos);
  CHECK(page->body.find("fetch(\"/v1/translate\"") != std::string::npos);
  CHECK(server.stop() == 0);
}

TEST_CASE("serve: bad flags and a taken port", "[cli][serve]") {
  const Result precision = run(kHeed + " serve -m " + model_dir() + " --precision int4", scratch("flags"));
  CHECK(precision.exit_code == 2);
  CHECK(precision.err.find("--precision") != std::string::npos);
  CHECK(precision.err.find("\"int8\"") != std::string::npos);
  const Result port = run(kHeed + " serve -m " + model_dir() + " --port 70000", scratch("flags"));
  CHECK(port.exit_code == 2);
  CHECK(port.err.rfind("heed: error: --port", 0) == 0);

  ServerProcess first(model_dir(), scratch("first"));
  REQUIRE(first.port() > 0);
  const Result taken =
      run(kHeed + " --quiet --threads 1 serve -m " + model_dir() + " --port " + std::to_string(first.port()),
          scratch("flags"));
  CHECK(taken.exit_code == 1);
  CHECK(taken.err == "heed: error: cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                         " (the port is taken, or the host is not an address of this machine)\n");
  CHECK(first.stop() == 0);
}
