// The worker protocol's device request and its error and fault replies (protocol/replies.hpp):
// each converts to the JSON line both sides have always spoken, and back.
#include <gtest/gtest.h>

#include "gpu/device_limits.hpp"
#include "protocol/replies.hpp"

namespace fusetune::protocol {
namespace {

TEST(ProtocolReplies, DeviceReplyRoundTripsAndKeepsItsKeys) {
  DeviceReply r;
  r.limits = *gpu::limits_for_arch("sm_90");
  r.name = "NVIDIA H200";
  r.total_mem = int64_t(150) << 30;
  r.driver_version = 13000;
  r.driver = "13.0";
  r.pci_bus_id = "0000:19:00.0";
  r.count = 8;
  const auto j = to_json(r);
  // The keys the device cache, the environment fingerprint and --json read.
  for (const char* k : {"limits", "name", "total_mem", "driver_version", "driver", "pci_bus_id", "count"})
    EXPECT_TRUE(j.contains(k)) << k;
  const DeviceReply back = device_reply_from_json(j);
  EXPECT_EQ(back.name, r.name);
  EXPECT_EQ(back.total_mem, r.total_mem);
  EXPECT_EQ(back.driver_version, r.driver_version);
  EXPECT_EQ(back.driver, r.driver);
  EXPECT_EQ(back.pci_bus_id, r.pci_bus_id);
  EXPECT_EQ(back.count, r.count);
  EXPECT_EQ(back.limits.sm_count, r.limits.sm_count);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(reply_kind(j), ReplyKind::answer);
}

TEST(ProtocolReplies, DeviceRequestNamesItsOrdinal) {
  const auto j = to_json(DeviceRequest{3});
  EXPECT_EQ(j.at("cmd"), "device");
  EXPECT_EQ(device_request_from_json(j).device, 3);
  EXPECT_EQ(device_request_from_json(nlohmann::json{{"cmd", "device"}}).device, 0);  // older tuners sent none
}

TEST(ProtocolReplies, ErrorAndFaultRepliesAreToldApartFromAnswers) {
  const auto e = to_json(ErrorReply{"no CUDA device", ExitCode::no_gpu});
  EXPECT_EQ(reply_kind(e), ReplyKind::error);
  EXPECT_EQ(error_reply_from_json(e).error, "no CUDA device");
  EXPECT_EQ(error_reply_from_json(e).exit_code, ExitCode::no_gpu);
  EXPECT_EQ(error_reply_from_json(nlohmann::json{{"error", "x"}}).exit_code, ExitCode::failure);

  const auto f = to_json(FaultReply{"an illegal address"});
  EXPECT_EQ(reply_kind(f), ReplyKind::fault);
  EXPECT_EQ(fault_reply_from_json(f).reason, "an illegal address");
  // A run reply whose variant faulted is an answer: its status is the variant's, not the worker's.
  EXPECT_EQ(reply_kind(nlohmann::json{{"status", "ok"}, {"name", "v"}}), ReplyKind::answer);
  EXPECT_EQ(reply_kind(nlohmann::json{{"status", "faulted"}, {"reason", "r"}, {"timed", false}}), ReplyKind::answer);
}

}  // namespace
}  // namespace fusetune::protocol
