#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "io/safetensors.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

using namespace heed;
namespace fs = std::filesystem;

namespace {

std::string temp_dir() {
  auto dir = fs::temp_directory_path() / ("heed-test-safetensors-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir.string();
}

std::string le_u64(uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

// A whole file image from a header text (padded here) and the data bytes.
std::string image(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return le_u64(header.size()) + header + data;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_safetensors(bytes, "broken.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

SafeTensorFile small_file() {
  SafeTensorFile f;
  f.metadata["a"] = "b";
  f.tensors["x"] = SafeTensor::from_f32({2}, {1.0f, -2.0f});
  f.tensors["i"] = SafeTensor::from_i64({1}, {5});
  f.tensors["m"] = SafeTensor::from_bool({3}, {true, false, true});
  return f;
}

}  // namespace

TEST_CASE("the writer produces exactly the standard safetensors bytes") {
  // Built by hand from the format description: u64 LE header length 192, the JSON (8-byte
  // tensors first, then 4-byte, then 1-byte), 3 spaces of padding, then the raw data.
  const std::string json = R"({"__metadata__":{"a":"b"},)"
                           R"("i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
                           R"("x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                           R"("m":{"dtype":"BOOL","shape":[3],"data_offsets":[16,19]}}   )";
  REQUIRE(json.size() == 192);
  const unsigned char length_bytes[8] = {0xC0, 0, 0, 0, 0, 0, 0, 0};
  const unsigned char data_bytes[19] = {5,    0,    0,    0,    0, 0, 0, 0,  // I64 5
                                        0x00, 0x00, 0x80, 0x3F,              // F32 1.0
                                        0x00, 0x00, 0x00, 0xC0,              // F32 -2.0
                                        1,    0,    1};                      // BOOL
  const std::string expected = std::string(reinterpret_cast<const char*>(length_bytes), 8) + json +
                               std::string(reinterpret_cast<const char*>(data_bytes), 19);
  CHECK(serialize_safetensors(small_file()) == expected);

  // ... and the reader reads those hand-made bytes back.
  const SafeTensorFile back = parse_safetensors(expected, "hand-made");
  CHECK(back.metadata == std::map<std::string, std::string>{{"a", "b"}});
  CHECK(back.at("x").as_f32() == std::vector<float>{1.0f, -2.0f});
  CHECK(back.at("i").as_i64() == std::vector<int64_t>{5});
  CHECK(back.at("m").as_bool() == std::vector<bool>{true, false, true});
}

TEST_CASE("write then read gives back every tensor, dtype, shape and metadata") {
  const std::string path = temp_dir() + "/round.safetensors";
  SafeTensorFile f = small_file();
  f.tensors["w"] = SafeTensor::from_f32({2, 3}, {0.5f, 1.5f, -3.25f, 1e-8f, 7.0f, 0.0f});
  f.tensors["n"] = SafeTensor::from_i32({2, 2}, {1, -2, 3, 2147483647});
  f.tensors["empty"] = SafeTensor::from_f32({0, 4}, {});
  SafeTensor bf16{"BF16", {2}, {0x80, 0x3F, 0x00, 0xC0}};
  f.tensors["h"] = bf16;
  f.metadata["note"] = "ünïcødé ✓";
  write_safetensors(path, f);

  const SafeTensorFile back = read_safetensors(path);
  REQUIRE(back.tensors.size() == f.tensors.size());
  for (const auto& [name, t] : f.tensors) {
    INFO(name);
    CHECK(back.at(name).dtype == t.dtype);
    CHECK(back.at(name).shape == t.shape);
    CHECK(back.at(name).data == t.data);
  }
  CHECK(back.metadata == f.metadata);
  CHECK(back.at("n").as_i32() == std::vector<int32_t>{1, -2, 3, 2147483647});
  CHECK_THROWS_WITH(back.at("w").as_i64(), Catch::Contains("dtype F32, expected I64"));
  CHECK_THROWS_WITH(back.at("nope"), Catch::Contains("no tensor named 'nope'"));
  fs::remove_all(temp_dir());
}

TEST_CASE("every tensor the writer places is aligned to its element size") {
  SafeTensorFile f;
  f.tensors["a_bool"] = SafeTensor::from_bool({3}, {true, true, false});
  f.tensors["b_f32"] = SafeTensor::from_f32({3}, {1, 2, 3});
  f.tensors["c_i64"] = SafeTensor::from_i64({1}, {9});
  f.tensors["d_bf16"] = SafeTensor{"BF16", {1}, {0, 0}};
  f.tensors["e_i32"] = SafeTensor::from_i32({1}, {4});
  const std::string bytes = serialize_safetensors(f);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  const auto header = bytes.substr(8, n);
  // I64 at 0, then the F32 and I32 (names in order), then BF16, then BOOL
  CHECK(header.find(R"("c_i64":{"dtype":"I64","shape":[1],"data_offsets":[0,8]})") != std::string::npos);
  CHECK(header.find(R"("b_f32":{"dtype":"F32","shape":[3],"data_offsets":[8,20]})") != std::string::npos);
  CHECK(header.find(R"("e_i32":{"dtype":"I32","shape":[1],"data_offsets":[20,24]})") != std::string::npos);
  CHECK(header.find(R"("d_bf16":{"dtype":"BF16","shape":[1],"data_offsets":[24,26]})") != std::string::npos);
  CHECK(header.find(R"("a_bool":{"dtype":"BOOL","shape":[3],"data_offsets":[26,29]})") != std::string::npos);
}

TEST_CASE("the golden file of the PyTorch reference reads with its documented values") {
  const SafeTensorFile g = read_safetensors(HEED_TEST_FIXTURES "/golden/gru-tiny.safetensors");
  CHECK(g.tensors.size() == 69);
  const SafeTensor& src = g.at("batch.src");
  CHECK(src.dtype == "I64");
  CHECK(src.shape == std::vector<int64_t>{3, 8});
  const auto ids = src.as_i64();
  CHECK(std::vector<int64_t>(ids.begin(), ids.begin() + 8) == std::vector<int64_t>{8, 22, 6, 12, 7, 3, 0, 0});
  CHECK(g.at("batch.src_lengths").as_i64() == std::vector<int64_t>{6, 4, 8});
  CHECK(g.at("out.num_labels").as_i64() == std::vector<int64_t>{15});
  CHECK(g.at("out.loss").shape == std::vector<int64_t>{1});
  CHECK(g.at("out.loss").as_f32()[0] == Approx(3.0477729).epsilon(1e-7));
  CHECK(g.at("batch.label_mask").as_bool()[4] == true);   // row 0: 4 words + </s>
  CHECK(g.at("batch.label_mask").as_bool()[5] == false);  // then padding
  CHECK(g.at("param.src_emb.weight").shape == std::vector<int64_t>{23, 8});
  CHECK(g.metadata.at("arch") == "gru");
  CHECK(g.metadata.at("num_labels") == "15");

  // Rewritten by our writer, the file holds the same tensors and metadata.
  const SafeTensorFile again = parse_safetensors(serialize_safetensors(g), "rewritten");
  CHECK(again.metadata == g.metadata);
  REQUIRE(again.tensors.size() == g.tensors.size());
  for (const auto& [name, t] : g.tensors) {
    INFO(name);
    CHECK((again.at(name).dtype == t.dtype && again.at(name).shape == t.shape && again.at(name).data == t.data));
  }
}

TEST_CASE("every corrupt file gives a clear error naming the file and the defect") {
  const std::string ok_json = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string eight(8, '\0');
  REQUIRE(error_of(image(ok_json, eight)) == "(no error)");

  CHECK_THAT(error_of(""), Catch::Contains("broken.safetensors") && Catch::Contains("shorter than the 8-byte"));
  CHECK_THAT(error_of("abc"), Catch::Contains("3 bytes"));
  CHECK_THAT(error_of(le_u64(1000) + "{}"), Catch::Contains("header length 1000 exceeds the file"));
  CHECK_THAT(error_of(le_u64(~0ull) + "{}"), Catch::Contains("exceeds the file"));
  CHECK_THAT(error_of(image("{\"t\": [", "")),
             Catch::Contains("broken.safetensors") && Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of(image("[1, 2]", "")), Catch::Contains("not a JSON object"));
  CHECK_THAT(error_of(image("{\"\xff\": 1}", "")), Catch::Contains("not valid UTF-8"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F99","shape":[2],"data_offsets":[0,8]}})", eight)),
             Catch::Contains("tensor 't'") && Catch::Contains("unknown dtype 'F99'"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[2]}})", eight)),
             Catch::Contains("needs an object with dtype, shape and data_offsets"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight)),
             Catch::Contains("non-negative integers"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight)),
             Catch::Contains("8 bytes of data do not match F32 [3]"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight)),
             Catch::Contains("out of range"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", eight)),
             Catch::Contains("out of range"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight)),
             Catch::Contains("hole in the data before tensor 't'"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("u":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                            eight)),
             Catch::Contains("overlaps"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", eight)),
             Catch::Contains("4 bytes after the last tensor"));
  CHECK_THAT(error_of(image(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                            eight)),
             Catch::Contains("names tensor 't' twice"));
  CHECK_THAT(error_of(image(R"({"__metadata__":{"k":3}})", "")), Catch::Contains("must be a string"));
  // Empty tensors are valid, but a zero must not hide dimensions whose product exceeds int64.
  CHECK(error_of(image(R"({"t":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}})", "")) == "(no error)");
  for (const char* shape : {"[4294967296,2147483648,0]", "[0,4294967296,4294967296]"})
    CHECK_THAT(
        error_of(image(std::string(R"({"t":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})", "")),
        Catch::Contains("0 bytes of data do not match F32"));

  // A truncated copy of a real file: the data section is short.
  const std::string golden = read_file(HEED_TEST_FIXTURES "/golden/gru-tiny.safetensors");
  CHECK_THAT(error_of(golden.substr(0, golden.size() - 1)), Catch::Contains("out of range"));
  // A missing file names the path.
  CHECK_THROWS_WITH(read_safetensors("/nonexistent/x.safetensors"), Catch::Contains("/nonexistent/x.safetensors"));
}

TEST_CASE("the writer refuses data that do not match the shape") {
  SafeTensorFile f;
  f.tensors["bad"] = SafeTensor{"F32", {3}, std::vector<uint8_t>(8)};
  CHECK_THROWS_WITH(serialize_safetensors(f), Catch::Contains("'bad' has 8 bytes"));
  f.tensors["bad"] = SafeTensor{"F32", {int64_t(1) << 62}, {}};  // 2^64 bytes: wraps to 0 unless checked
  CHECK_THROWS_WITH(serialize_safetensors(f), Catch::Contains("'bad' has 0 bytes"));
  f.tensors["bad"] = SafeTensor{"Q4", {1}, std::vector<uint8_t>(1)};
  CHECK_THROWS_WITH(serialize_safetensors(f), Catch::Contains("unknown safetensors dtype 'Q4'"));
  CHECK_THROWS_WITH(SafeTensor::from_f32({2, 2}, {1, 2, 3}), Catch::Contains("3 values do not fill shape [2, 2]"));
}

TEST_CASE("a failed write leaves the previous file intact") {
  const std::string dir = temp_dir();
  const std::string path = dir + "/model.safetensors";
  write_safetensors(path, small_file());
  const std::string before = read_file(path);

  SafeTensorFile bad;
  bad.tensors["bad"] = SafeTensor{"F32", {3}, std::vector<uint8_t>(4)};
  CHECK_THROWS(write_safetensors(path, bad));
  CHECK(read_file(path) == before);

  {  // a writer destroyed before commit (e.g. an exception mid-write) leaves no trace
    AtomicFile out(path);
    out.write(std::string("half a file"));
  }
  CHECK(read_file(path) == before);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.is_regular_file();
  CHECK(files == 1);  // no temporary left behind
  fs::remove_all(dir);
}
