// The device description kept between runs (src/tune/device_cache.hpp): what its key notices,
// that a damaged or foreign entry is a miss, and that `tune` answers a stored result from it
// without starting a worker, and only then. GPU-free: a fake /proc tree and the fake worker.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "spec/parser.hpp"
#include "tune/device_cache.hpp"
#include "common/temp_dir.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A /proc with one H200 and the NVIDIA kernel driver.
struct FakeProc {
  TempDir dir{"fake-proc"};
  FakeProc() {
    write(dir.path() / "sys/kernel/random/boot_id", "0f3c-boot-1\n");
    write(dir.path() / "driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05\n");
    write(dir.path() / "driver/nvidia/gpus/0000:18:00.0/information",
          "Model: NVIDIA H200\nGPU UUID: GPU-1111\nBus Location: 0000:18:00.0\n");
    fs::create_directories(dir.path() / "driver/nvidia/capabilities/gpu0");
  }
  [[nodiscard]] const fs::path& root() const { return dir.path(); }
};

const std::string kWorker = FUSETUNE_FAKE_WORKER;

TEST(DeviceCache, NoKeyWithoutTheNvidiaDriver) {
  TempDir empty("no-proc");
  write(empty.path() / "sys/kernel/random/boot_id", "b\n");
  EXPECT_EQ(device_cache_key(empty.path(), 0, kWorker), "");
}

TEST(DeviceCache, KeyChangesWithWhatCouldChangeTheAnswer) {
  FakeProc proc;
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  const std::string k = device_cache_key(proc.root(), 0, kWorker);
  ASSERT_FALSE(k.empty());
  EXPECT_EQ(device_cache_key(proc.root(), 0, kWorker), k);
  EXPECT_NE(device_cache_key(proc.root(), 1, kWorker), k);  // another index
  EXPECT_EQ(device_cache_key(proc.root(), 0, "/nonexistent/worker"), "");  // no worker: no key
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  EXPECT_NE(device_cache_key(proc.root(), 0, kWorker), k);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(device_cache_key(proc.root(), 0, kWorker), k);
  // A MIG instance appears.
  fs::create_directories(proc.root() / "driver/nvidia/capabilities/gpu0/mig/gi1");
  const std::string mig = device_cache_key(proc.root(), 0, kWorker);
  EXPECT_NE(mig, k);
  // Another GPU in the slot, a new driver, a reboot.
  write(proc.root() / "driver/nvidia/gpus/0000:18:00.0/information", "Model: NVIDIA H100\nGPU UUID: GPU-2222\n");
  const std::string swapped = device_cache_key(proc.root(), 0, kWorker);
  EXPECT_NE(swapped, mig);
  write(proc.root() / "driver/nvidia/version", "NVRM version: 590.1\n");
  const std::string driver = device_cache_key(proc.root(), 0, kWorker);
  EXPECT_NE(driver, swapped);
  write(proc.root() / "sys/kernel/random/boot_id", "0f3c-boot-2\n");
  EXPECT_NE(device_cache_key(proc.root(), 0, kWorker), driver);
}

TEST(DeviceCache, StoresAndFindsOnlyItsOwnKey) {
  TempDir dir("device-cache");
  const nlohmann::json dev = {{"name", "NVIDIA H200"}, {"limits", {{"sm_count", 132}}}, {"driver", "13.0"}};
  EXPECT_FALSE(load_cached_device(dir.path(), "k1"));
  store_cached_device(dir.path(), "k1", dev);
  ASSERT_TRUE(load_cached_device(dir.path(), "k1"));
  EXPECT_EQ(*load_cached_device(dir.path(), "k1"), dev);
  EXPECT_FALSE(load_cached_device(dir.path(), "k2"));
  EXPECT_FALSE(load_cached_device(dir.path(), ""));
  EXPECT_FALSE(load_cached_device("", "k1"));
  // Damaged entries are misses, not errors.
  for (const auto& entry : fs::directory_iterator(dir.path())) write(entry.path(), "{\"format\": 1, \"key\": ");
  EXPECT_FALSE(load_cached_device(dir.path(), "k1"));
  store_cached_device(dir.path(), "k1", {{"name", "no limits"}});
  EXPECT_FALSE(load_cached_device(dir.path(), "k1"));
}

TEST(DeviceCache, AStoredAnswerComesFromItWithoutAWorkerAndNothingElseDoes) {
  TempDir dir("device-cache");
  const auto problem = spec::parse("conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | relu");
  TuneOptions o;
  o.worker_exe = kWorker;
  o.device_cache_dir = dir.path().string();
  o.device_cache_key = "test key";
  int asked = 0;
  o.on_device = [&](const nlohmann::json&) {
    ++asked;
    TuneDecision d;
    d.stop = true;
    return d;
  };
  // The worker describes the device, and the description is kept.
  const auto first = run_tune(problem, o);
  EXPECT_TRUE(first.stopped);
  EXPECT_FALSE(first.device_cached);
  EXPECT_EQ(first.device.value("name", ""), "Fake H200");
  ASSERT_TRUE(load_cached_device(dir.path(), "test key"));
  // With no worker to start, the stored answer still comes, from the cached description.
  o.worker_exe = "/nonexistent/fusetune";
  const auto second = run_tune(problem, o);
  EXPECT_TRUE(second.stopped);
  EXPECT_TRUE(second.device_cached);
  EXPECT_EQ(second.device, first.device);
  EXPECT_EQ(asked, 2);
  // Anything but a stored answer needs the worker: the cache never stands in for it.
  o.on_device = [&](const nlohmann::json&) { return TuneDecision{}; };
  EXPECT_ANY_THROW(run_tune(problem, o));
}

TEST(DeviceCache, ForceAsksTheWorkerButStillKeepsItsDescription) {
  TempDir dir("device-cache");
  const auto problem = spec::parse("conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | relu");
  TuneOptions o;
  o.worker_exe = kWorker;
  o.device_cache_dir = dir.path().string();
  o.device_cache_key = "test key";
  o.device_cache_read = false;  // tune --force
  o.on_device = [&](const nlohmann::json&) {
    TuneDecision d;
    d.stop = true;
    return d;
  };
  store_cached_device(dir.path(), "test key", {{"name", "an older description"}, {"limits", {{"sm_count", 1}}}});
  const auto rep = run_tune(problem, o);
  EXPECT_FALSE(rep.device_cached);  // the worker answered, not the stale entry
  EXPECT_EQ(rep.device.value("name", ""), "Fake H200");
  const auto kept = load_cached_device(dir.path(), "test key");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->value("name", ""), "Fake H200");  // and its description replaced the old one
}

}  // namespace
}  // namespace fusetune::tune
