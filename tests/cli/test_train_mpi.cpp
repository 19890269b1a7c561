// Data-parallel training under mpirun (two processes, one thread each): N processes train the
// model one process trains with accumulate = N (same data order, same dropout masks, parameters
// and losses equal to float rounding), for both translation models; a run resumes with another
// process count; a rank that dies ends the job within seconds and leaves a directory that loads
// and resumes; bad input under mpirun gives one clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "io/safetensors.hpp"
#include "train_fixture.hpp"

using namespace heed;
using namespace heed::test;

namespace {

// Root in a container (CI) needs the allow-run-as-root pair; the container may forbid the
// cross-memory-attach copy Open MPI's shared-memory transport tries first.
// In the sanitized build LeakSanitizer stays on for every single-process run of the same code,
// but not for ranks: Open MPI keeps allocations until exit in components it has unloaded by then
// (their stacks name no module a suppression could match).
const std::string kMpiEnv =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "
    "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" ";
const std::string kMpiArgs = "mpirun -np 2 --oversubscribe --bind-to none ";
const std::string kMpirun = kMpiEnv + kMpiArgs;

std::string heed1() { return kHeed + " --threads 1 "; }

// Largest difference between two tensors relative to the larger magnitude of the reference.
double relative_difference(const SafeTensor& a, const SafeTensor& b) {
  const auto x = a.as_f32(), y = b.as_f32();
  REQUIRE(x.size() == y.size());
  double diff = 0, scale = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(x[i] - y[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(x[i])));
  }
  return diff / scale;
}

SafeTensor third(const SafeTensor& t, int k) {
  const auto values = t.as_f32();
  const size_t n = values.size() / 3;
  return SafeTensor::from_f32({static_cast<int64_t>(n)},
                              std::vector<float>(values.begin() + k * n, values.begin() + (k + 1) * n));
}

void check_same_parameters(const std::string& want_file, const std::string& got_file) {
  const SafeTensorFile want = read_safetensors(want_file), got = read_safetensors(got_file);
  REQUIRE(want.tensors.size() == got.tensors.size());
  for (const auto& [name, t] : want.tensors) {
    INFO(name);
    REQUIRE(got.tensors.count(name) == 1);
    const SafeTensor& u = got.tensors.at(name);
    if (name.find("in_proj_bias") == std::string::npos) {
      CHECK(relative_difference(t, u) <= 1e-5);
      continue;
    }
    // Attention's key bias adds one constant to every score of a softmax row, so its exact
    // gradient is zero and what backward produces is rounding noise, which Adam scales to
    // full-size steps: two summation orders give different noise. The query and value thirds
    // must agree; the key third only stays as small as noise-driven steps leave it.
    CHECK(relative_difference(third(t, 0), third(u, 0)) <= 1e-5);
    CHECK(relative_difference(third(t, 2), third(u, 2)) <= 1e-5);
    for (float x : third(u, 1).as_f32()) CHECK(std::fabs(x) < 0.01f);
  }
}

// Training losses of metrics.jsonl by step.
std::vector<double> train_losses(const std::string& model_dir) {
  std::vector<double> losses;
  for (const auto& record : metrics_records(model_dir, "train")) losses.push_back(record.at("loss").get<double>());
  return losses;
}

void check_same_losses(const std::string& want_dir, const std::string& got_dir) {
  const std::vector<double> want = train_losses(want_dir), got = train_losses(got_dir);
  REQUIRE(want.size() == got.size());
  REQUIRE(!want.empty());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("step " << i + 1);
    CHECK(got[i] == Approx(want[i]).epsilon(1e-5));
  }
}

std::string state_meta(const std::string& model_dir, const std::string& key) {
  return read_safetensors(model_dir + "/trainer_state.safetensors").metadata.at(key);
}

void check_same_data_position(const std::string& want_dir, const std::string& got_dir) {
  for (const char* key : {"step", "epoch", "batch_index"}) {
    INFO(key);
    CHECK(state_meta(got_dir, key) == state_meta(want_dir, key));
  }
}

// The tiny config of these tests with PATCH merged into it (RFC 7386: null removes a key).
std::string mpi_config(const std::string& dir, const nlohmann::json& patch) {
  const std::string path = write_tiny_config(dir, {{"log_every", 1}, {"validate_every", 15}});
  nlohmann::json c = nlohmann::json::parse(slurp(path));
  c.merge_patch(patch);
  std::ofstream(path) << c.dump(2);
  return path;
}

// Both models with the recipes' embeddings: one matrix for source, target and output. Backward
// uses it first (the output projection) and last (the embedding lookups), so its bucket may start
// only at the end.
std::string gru_config(const std::string& dir) {
  return mpi_config(dir, {{"model", {{"share_embeddings", true}, {"gru", {{"tie_output", true}}}}}});
}

std::string transformer_config(const std::string& dir) {
  return mpi_config(
      dir, {{"model",
             {{"arch", "transformer"},
              {"share_embeddings", true},
              {"gru", nullptr},
              {"transformer", {{"d_model", 16}, {"heads", 2}, {"ffn_dim", 32}, {"enc_layers", 1}, {"dec_layers", 1}}}}},
            {"training", {{"learning_rate", 0.003}}}});
}

// CONFIG trained into DIR/one by 1 process with accumulate=2 and into DIR/two by 2 ranks; the
// second run's log.
std::string train_one_and_two(const std::string& config, const TempDir& dir) {
  Result r =
      run(heed1() + "train -c " + config + " -m " + (dir / "one") + " --set training.accumulate=2", dir / "one-log");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run(kMpirun + heed1() + "train -c " + config + " -m " + (dir / "two"), dir / "two-log");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.err;
}

// The gradient exchange as the train records of 2 ranks report it: every parameter's fp32
// gradient summed per update, and the ranks' waits after backward, least <= most.
void check_exchange_records(const std::string& model_dir) {
  double parameter_mb = 0;
  for (const auto& [name, t] : read_safetensors(model_dir + "/model.safetensors").tensors)
    parameter_mb += double(t.element_count()) * 4 / 1e6;
  const std::vector<nlohmann::json> records = metrics_records(model_dir, "train");
  CHECK(!records.empty());
  for (const auto& record : records) {
    INFO(record.dump());
    CHECK(record.at("allreduce_mb_per_step").get<double>() == Approx(parameter_mb).epsilon(1e-9));
    const double least = record.at("allreduce_wait_ms_per_step_min"),
                 most = record.at("allreduce_wait_ms_per_step_max");
    CHECK(least >= 0);
    CHECK(least <= most);
    CHECK(most < 10000);
  }
}

void check_two_ranks_equal_accumulate(const std::string& config, const TempDir& dir) {
  const std::string one = dir / "one", two = dir / "two";
  const std::string log = train_one_and_two(config, dir);
  CHECK_THAT(log, Catch::Contains("data-parallel: 2 processes, 2 batches per update"));
  CHECK(log.find("rank 1") == std::string::npos);  // rank 1 is silent when all goes well
  check_same_data_position(one, two);
  check_same_losses(one, two);
  check_same_parameters(one + "/checkpoints/step-00000030.safetensors", two + "/checkpoints/step-00000030.safetensors");
  check_same_parameters(one + "/model.safetensors", two + "/model.safetensors");
  check_exchange_records(two);
  CHECK(slurp(one + "/metrics.jsonl").find("allreduce") == std::string::npos);  // alone: nothing exchanged
}

}  // namespace

TEST_CASE("mpirun -np 2: the GRU model of one process with accumulate=2, and resume with 1 process") {
  TempDir dir("train-mpi-gru");
  write_reverse_corpus(dir.path.string(), "train", 300, 5);
  const std::string config = gru_config(dir.path.string());
  check_two_ranks_equal_accumulate(config, dir);

  // 15 steps on 2 processes, then 15 more on 1 process with accumulate=2: the same run.
  const std::string split = dir / "split";
  Result r = run(kMpirun + heed1() + "train -c " + config + " -m " + split + " --set training.max_steps=15",
                 dir / "split-log");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(state_meta(split, "step") == "15");
  r = run(heed1() + "train --resume -m " + split + " --set training.max_steps=30 --set training.accumulate=2",
          dir / "resume-log");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("resumed at step 15"));
  const std::string whole = dir / "one";
  check_same_data_position(whole, split);
  check_same_losses(whole, split);
  check_same_parameters(whole + "/checkpoints/step-00000030.safetensors",
                        split + "/checkpoints/step-00000030.safetensors");
}

TEST_CASE("mpirun -np 2: the Transformer of one process with accumulate=2") {
  TempDir dir("train-mpi-transformer");
  write_reverse_corpus(dir.path.string(), "train", 300, 6);
  check_two_ranks_equal_accumulate(transformer_config(dir.path.string()), dir);
}

TEST_CASE("mpirun -np 2: validation is sharded and gives one process's dev loss and BLEU") {
  TempDir dir("train-mpi-valid");
  write_reverse_corpus(dir.path.string(), "train", 300, 7);
  write_reverse_corpus(dir.path.string(), "dev", 41, 8);  // odd: the shards differ in size
  const std::string config =
      write_tiny_config(dir.path.string(), {{"max_steps", 10}, {"validate_every", 10}, {"validation_metric", "bleu"}},
                        /*with_dev=*/true);
  train_one_and_two(config, dir);
  const std::vector<nlohmann::json> one = metrics_records(dir / "one", "valid"),
                                    two = metrics_records(dir / "two", "valid");
  REQUIRE(!one.empty());
  REQUIRE(!two.empty());
  const nlohmann::json &a = one.back(), &b = two.back();
  CHECK(b.at("loss").get<double>() == Approx(a.at("loss").get<double>()).epsilon(1e-5));
  CHECK(b.at("bleu").get<double>() == Approx(a.at("bleu").get<double>()).margin(1e-9));
}

namespace {
// `mpirun ... heed --threads 1 train ARGS` as a child, its output in LOG.out / LOG.err.
pid_t spawn_mpirun(const std::string& args, const std::string& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string command =
        kMpiEnv + "exec " + kMpiArgs + heed1() + "train " + args + " > '" + log + ".out' 2> '" + log + ".err'";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  return pid;
}
}  // namespace

TEST_CASE("mpirun -np 2: a resumed run whose time budget is spent takes no further update") {
  TempDir dir("train-mpi-spent");
  write_reverse_corpus(dir.path.string(), "train", 300, 12);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 0}, {"max_time", "1s"}});
  const std::string model = dir / "model";
  Result r = run(kMpirun + heed1() + "train -c " + config + " -m " + model, dir / "spent");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string step = state_meta(model, "step");
  // The ranks' shared clock starts from the saved time: it started from 0, one update too many.
  r = run(kMpirun + heed1() + "train --resume -m " + model, dir / "again");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(state_meta(model, "step") == step);
}

TEST_CASE("mpirun -np 2: Ctrl-C on mpirun stops both ranks at one update, rank 0 saves it, and it resumes") {
  TempDir dir("train-mpi-interrupt");
  write_reverse_corpus(dir.path.string(), "train", 300, 12);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 100000}, {"validate_every", 5}});
  const std::string model = dir / "model";
  const pid_t mpirun = spawn_mpirun("-c " + config + " -m " + model, dir / "int");
  REQUIRE(wait_for_file(model + "/checkpoints/step-00000010.safetensors", mpirun));
  const auto sent_at = std::chrono::steady_clock::now();
  ::kill(mpirun, SIGINT);
  const int status = wait_child(mpirun);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent_at).count();
  const std::string err = slurp(dir / "int.err");
  INFO(err);
  CHECK(status == 1);
  CHECK(seconds < 30);
  const std::string step = state_meta(model, "step");
  CHECK(std::stoll(step) >= 10);
  // one message, from rank 0, naming the saved step; no rank ended the job for the others
  CHECK_THAT(err, Catch::Contains("interrupted: checkpoint saved at step " + step + ";"));
  CHECK(err.find("rank 1") == std::string::npos);
  CHECK(err.find("MPI_ABORT") == std::string::npos);
  // The state is saved at any step; a checkpoint file only at a scheduled one (validate_every 5).
  CHECK(fs::exists(model + "/checkpoints/step-" + std::string(8 - step.size(), '0') + step + ".safetensors") ==
        (std::stoll(step) % 5 == 0));
  Result r = run(heed1() + "train --resume -m " + model +
                     " --set training.accumulate=2 --set training.max_steps=" + std::to_string(std::stoll(step) + 3),
                 dir / "resume-log");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("resumed at step " + step));
}

TEST_CASE("mpirun -np 2: a rank killed mid-run ends the job; the directory loads and resumes") {
  TempDir dir("train-mpi-kill");
  write_reverse_corpus(dir.path.string(), "train", 300, 9);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 100000}, {"validate_every", 5}});
  const std::string model = dir / "model";
  const pid_t mpirun = spawn_mpirun("-c " + config + " -m " + model, dir / "kill");
  REQUIRE(wait_for_file(model + "/checkpoints/step-00000010.safetensors", mpirun));
  // mpirun's children are the two ranks; kill the one that is not rank 0 (it holds no lock).
  Result children = run("pgrep -P " + std::to_string(mpirun), dir / "pgrep");
  std::istringstream pids(children.out);
  std::vector<pid_t> ranks;
  for (pid_t pid; pids >> pid;) ranks.push_back(pid);
  REQUIRE(ranks.size() == 2);
  const std::string lock_holder = slurp(model + "/train.lock");
  const pid_t victim =
      std::to_string(ranks[0]) == lock_holder.substr(0, lock_holder.find_first_of(" \n")) ? ranks[1] : ranks[0];
  const auto killed_at = std::chrono::steady_clock::now();
  ::kill(victim, SIGKILL);
  const int status = wait_child(mpirun);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  INFO(slurp(dir / "kill.err"));
  CHECK(status != 0);
  CHECK(seconds < 30);

  for (const auto& entry : fs::recursive_directory_iterator(model))
    if (entry.path().extension() == ".safetensors") {
      INFO(entry.path());
      CHECK_NOTHROW(read_safetensors(entry.path().string()));
    }
  std::ofstream(dir / "input.txt") << "kalo mimi nupe\n";
  Result r = run(heed1() + "translate -m " + model + " -i " + (dir / "input.txt"), dir / "translate-log");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(!r.out.empty());
  const int64_t at = std::stoll(state_meta(model, "step"));
  r = run(heed1() + "train --resume -m " + model +
              " --set training.accumulate=2 --set training.max_steps=" + std::to_string(at + 5),
          dir / "resume-log");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(state_meta(model, "step") == std::to_string(at + 5));
}

TEST_CASE("mpirun -np 2: bad input gives a clear error and a non-zero exit, never a hang") {
  TempDir dir("train-mpi-errors");
  write_reverse_corpus(dir.path.string(), "train", 50, 10);
  const std::string config = write_tiny_config(dir.path.string());
  Result r = run(kMpirun + heed1() + "train -c " + config + " -m " + (dir / "m") + " --set training.batch_tokens=0",
                 dir / "bad-field");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("heed: error:") && Catch::Contains("training.batch_tokens"));

  r = run(kMpirun + heed1() + "train -c " + config + " -m " + (dir / "m2") +
              " --set data.train.src=" + (dir / "missing.src"),
          dir / "missing-file");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("missing.src"));
}

TEST_CASE("mpirun -np 2 without --threads: each rank takes its share of the cores, and only rank 0 says so") {
  TempDir dir("train-mpi-threads");
  write_reverse_corpus(dir.path.string(), "train", 50, 13);
  const std::string config = write_tiny_config(dir.path.string(), {{"max_steps", 2}});
  // ctest sets HEED_THREADS=1 for every test; this one needs heed's own choice
  Result r = run("env -u HEED_THREADS " + kMpirun + kHeed + " train -c " + config + " -m " + (dir / "m"), dir / "log");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string line = "2 processes of this job on " + std::to_string(cores) +
                           " cores: " + std::to_string(std::max(1u, cores / 2)) + " thread(s) each";
  const size_t first = r.err.find(line);
  CHECK(first != std::string::npos);
  CHECK(r.err.find(line, first + 1) == std::string::npos);
}
