// `tune --devices`, GPU-free: one fake worker per GPU (tests/fake_worker.cpp; FUSETUNE_FAKE_GPUS
// says how many the machine has). The solutions' first passes are spread over every GPU and run
// at the same time; the baselines, floors, finalist and confirmation rounds run on the first,
// and every figure says which GPU it comes from; the winner is the one a single GPU finds; the
// guided search picks the same variants whichever GPU answers first; a GPU of another kind or
// one the machine lacks is one clear error; a fault on another GPU is recorded and survived.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "common/error.hpp"
#include "spec/parser.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {
namespace {

using codegen::Role;

// Sets environment variables for one test, and unsets them after.
class FakeMachine {
 public:
  FakeMachine(int gpus, int run_ms = 0) {
    set("FUSETUNE_FAKE_GPUS", std::to_string(gpus));
    if (run_ms > 0) set("FUSETUNE_FAKE_RUN_MS", std::to_string(run_ms));
    log_ = ::testing::TempDir() + "fake_runs." + std::to_string(getpid()) + "." +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log";
    std::filesystem::remove(log_);
    set("FUSETUNE_FAKE_LOG", log_);
  }
  ~FakeMachine() {
    for (const auto& n : names_) ::unsetenv(n.c_str());
    std::filesystem::remove(log_);
  }
  void set(const std::string& name, const std::string& value) {
    ::setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
  }

  struct RunEntry {
    int device = 0;
    std::string variant;
    long long start = 0, end = 0;
  };
  // The GPU that ran each variant's first pass (a `run`; re-timings are not logged).
  std::map<std::string, int> device_of() const {
    std::map<std::string, int> out;
    for (const auto& r : runs()) out[r.variant] = r.device;
    return out;
  }
  std::set<int> devices_used() const {
    std::set<int> out;
    for (const auto& r : runs()) out.insert(r.device);
    return out;
  }

  // Every `run` the fake workers answered, in the order they wrote them.
  std::vector<RunEntry> runs() const {
    std::vector<RunEntry> out;
    std::ifstream in(log_);
    RunEntry e;
    while (in >> e.device >> e.variant >> e.start >> e.end) out.push_back(e);
    return out;
  }

 private:
  std::vector<std::string> names_;
  std::string log_;
};

const char* kSpec = "conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | min(0.5) | add(param[k]) | mul(2)";

TuneOptions options(const std::string& strategy, std::vector<int> more) {
  TuneOptions o;
  o.worker_exe = FUSETUNE_FAKE_WORKER;
  o.max_variants = strategy == "model" ? 8 : 4;
  o.retime_rounds = 5;
  o.strategy = parse_strategy(strategy);
  o.more_devices = std::move(more);
  return o;
}

std::string winner(const TuneReport& rep) { return rep.winner ? rep.results[*rep.winner].variant.name : "none"; }

TEST(TuneDevices, SolutionsAreSpreadOverEveryGpuAndTheRoundsRunOnTheFirst) {
  FakeMachine machine(3, 20);
  const auto rep = run_tune(spec::parse(kSpec), options("exhaustive", {1, 2}));
  EXPECT_EQ(rep.devices, (std::vector<int>{0, 1, 2}));
  const auto device_of = machine.device_of();
  for (const auto& r : rep.results) {
    if (!r.timed) continue;
    if (r.time.round != fusetune::protocol::TimeRound::first_pass || r.variant.role() != Role::solution) {
      // Figures compared with each other come from one GPU: the first.
      EXPECT_EQ(r.gpu, 0) << r.variant.name << " (" << time_round_name(r.time.round) << ")";
    } else {
      // A first pass names the GPU that ran it.
      EXPECT_EQ(r.gpu, device_of.at(r.variant.name)) << r.variant.name;
    }
  }

  // The workers' own log: baselines and floors on GPU 0 only; an idle GPU takes the next
  // solution, so with equal run times each GPU runs about a third (at least an eighth, on a loaded
  // 2-core CI machine); runs of different GPUs overlap.
  const auto runs = machine.runs();
  std::map<int, size_t> solutions_by_gpu;
  bool overlap = false;
  for (const auto& a : runs) {
    if (a.variant.starts_with("unfused") || a.variant.starts_with("cudnn.")) {
      EXPECT_EQ(a.device, 0) << a.variant;
    } else {
      ++solutions_by_gpu[a.device];
    }
    for (const auto& b : runs)
      overlap = overlap || (a.device != b.device && a.start < b.end && b.start < a.end);
  }
  size_t solutions = 0;
  for (const auto& [gpu, n] : solutions_by_gpu) solutions += n;
  ASSERT_EQ(solutions_by_gpu.size(), 3u);
  for (const auto& [gpu, n] : solutions_by_gpu) EXPECT_GE(n * 8, solutions) << "GPU " << gpu;
  EXPECT_TRUE(overlap) << "no two GPUs ever ran at the same time";

  // The same winner as one GPU finds (the fake's figures do not depend on the GPU).
  FakeMachine one(1);
  EXPECT_EQ(winner(run_tune(spec::parse(kSpec), options("exhaustive", {}))), winner(rep));
}

TEST(TuneDevices, TheGuidedSearchPicksTheSameVariantsWhicheverGpuAnswersFirst) {
  std::vector<std::set<std::string>> measured;
  std::vector<std::string> winners;
  for (int slow : {0, 1}) {  // each GPU in turn answers last
    FakeMachine machine(2, 10);
    machine.set("FUSETUNE_FAKE_SLOW_GPU", std::to_string(slow));
    const auto rep = run_tune(spec::parse(kSpec), options("model", {1}));
    std::set<std::string> names;
    const auto device_of = machine.device_of();
    for (const auto& r : rep.results)
      if (r.variant.role() == Role::solution) {
        names.insert(r.variant.name);
        if (r.timed && r.time.round == fusetune::protocol::TimeRound::first_pass) {
          EXPECT_EQ(r.gpu, device_of.at(r.variant.name)) << r.variant.name;
        }
      }
    EXPECT_EQ(machine.devices_used(), (std::set<int>{0, 1}));
    // unfused's confirmation (run early, while the search went on, or in the round itself) is
    // the first GPU's.
    ASSERT_TRUE(rep.unfused);
    EXPECT_EQ(rep.results[*rep.unfused].time.round, fusetune::protocol::TimeRound::confirmation);
    EXPECT_EQ(rep.results[*rep.unfused].gpu, 0);
    measured.push_back(names);
    winners.push_back(winner(rep));
  }
  EXPECT_EQ(measured[0], measured[1]);
  EXPECT_EQ(winners[0], winners[1]);
  FakeMachine one(1);
  EXPECT_EQ(winner(run_tune(spec::parse(kSpec), options("model", {}))), winners[0]);
}

TEST(TuneDevices, AllIsEveryGpuTheDriverLists) {
  FakeMachine machine(2);
  auto o = options("exhaustive", {});
  o.all_devices = true;
  const auto rep = run_tune(spec::parse(kSpec), o);
  EXPECT_EQ(rep.devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(machine.devices_used(), (std::set<int>{0, 1}));
}

TEST(TuneDevices, AGpuOfAnotherKindIsRefusedInOneLine) {
  FakeMachine machine(2);
  machine.set("FUSETUNE_FAKE_ODD_GPU", "1");
  try {
    (void)run_tune(spec::parse(kSpec), options("exhaustive", {1}));
    FAIL() << "a tune over an H200 and an A100 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU 1 is a Fake A100 (sm_80"), std::string::npos) << what;
    EXPECT_NE(what.find("one tune measures one kind of GPU"), std::string::npos) << what;
  }
}

TEST(TuneDevices, AGpuTheMachineLacksIsOneClearError) {
  FakeMachine machine(2);
  try {
    (void)run_tune(spec::parse(kSpec), options("exhaustive", {5}));
    FAIL() << "a tune on a missing GPU ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("device 5: no GPU with index 5"), std::string::npos) << e.what();
  }
}

TEST(TuneDevices, AFaultOnAnotherGpuIsRecordedAndThatGpusWorkerReplaced) {
  FakeMachine machine(2, 5);
  auto o = options("exhaustive", {1});
  o.plant = "wrong,fault";
  const auto rep = run_tune(spec::parse(kSpec), o);
  bool fault = false;
  for (const auto& r : rep.results) {
    if (r.variant.name.find("planted-fault") != std::string::npos) {
      fault = true;
      EXPECT_EQ(r.status, fusetune::protocol::Status::faulted);
    } else if (r.variant.name.find("planted") == std::string::npos && !r.variant.name.ends_with(".eng9.k1_0")) {
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason;
    }
  }
  EXPECT_TRUE(fault);
  EXPECT_GE(rep.worker_restarts, 1);
  ASSERT_TRUE(rep.winner.has_value());
  // Both GPUs measured: a fault replaces one worker, not the run's lanes.
  EXPECT_EQ(machine.devices_used(), (std::set<int>{0, 1}));
}

// A tune that ends in an error (here its progress callback throws, as a full disk would make
// the database's callback) while another GPU runs a hung variant ends at once: the request still
// out is cancelled and its worker killed, not waited for up to the variant's timeout (600 s here).
TEST(TuneDevices, AnErrorDoesNotWaitOutAnotherGpusHungVariant) {
  FakeMachine machine(2);
  machine.set("FUSETUNE_FAKE_HANG_GPU", "1");
  auto o = options("exhaustive", {1});
  o.variant_timeout_s = 600;
  size_t started = 0;
  o.progress = [&](const std::string& phase, size_t, size_t, const std::string&) {
    // The first solution goes to GPU 0, the second to GPU 1, where it hangs.
    if (phase == "verifying and timing" && ++started == 3) throw Error(ExitCode::failure, "fake: the disk is full");
  };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW((void)run_tune(spec::parse(kSpec), o), Error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

// From the command line: --devices all over the fake machine's two GPUs; the JSON says which
// GPUs measured and which one each figure is from, and so does the database.
TEST(TuneDevices, TheCommandLineRecordsEachFiguresGpu) {
  FakeMachine machine(2, 2);
  const std::string dir = ::testing::TempDir() + "tune_devices_cli." + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string env = std::string("FUSETUNE_TEST_WORKER=") + FUSETUNE_FAKE_WORKER + " ";
  const std::string db = dir + "/t.db";
  auto r = fusetune::testing::run("tune \"conv2d(n=1,c=4,h=8,w=8,k=4,r=3) | relu\" -q -j2 --strategy exhaustive --devices all --db " + db +
                                      " --json " + dir + "/t.json",
                                  env);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(std::ifstream(dir + "/t.json"));
  EXPECT_EQ(doc["devices"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(machine.devices_used(), (std::set<int>{0, 1}));
  const auto device_of = machine.device_of();
  std::set<int> gpus;
  for (const auto& x : doc["results"]) {
    if (x["time_ms"].is_null()) {
      EXPECT_TRUE(x["gpu"].is_null()) << x["name"];
      continue;
    }
    gpus.insert(x["gpu"].get<int>());
    if (x["time_ms"]["round"] == "first pass") {
      EXPECT_EQ(x["gpu"], device_of.at(x["name"].get<std::string>())) << x["name"];
    } else {
      EXPECT_EQ(x["gpu"], 0) << x["name"];
    }
  }
  EXPECT_EQ(doc["winner"]["gpu"], 0);  // its figures are the confirmation round's

  r = fusetune::testing::run("query --all --db " + db + " --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<int> stored;
  const auto rows = nlohmann::json::parse(r.out);
  for (const auto& x : rows["results"])
    if (!x["gpu"].is_null()) stored.insert(x["gpu"].get<int>());
  EXPECT_EQ(stored, gpus);  // the database holds each figure's GPU as the JSON does
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fusetune::tune
