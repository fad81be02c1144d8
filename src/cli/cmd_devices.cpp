// `fusetune devices`: the GPUs the driver sees and the limits the search spaces use.
// Reading attributes creates no context, so this runs in-process.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "gpu/cudnn_version.hpp"
#include "gpu/compiler.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "protocol/limits_json.hpp"

namespace fusetune::cli {

void register_devices(CLI::App& app, DevicesArgs& args) {
  auto* cmd = app.add_subcommand("devices", "list GPUs with the specs tuning uses");
  add_output_args(cmd, args.out, "one row per GPU");
}

int run_devices(const DevicesArgs& args) {
  check_output_args(args.out);
  std::string why;
  if (!gpu::driver_available(&why)) throw NoGpuError(why);
  const int n = gpu::device_count();
  nlohmann::json j = json_document("devices", args.out);
  j["devices"] = nlohmann::json::array();
  CsvWriter csv({"ordinal", "name", "arch", "sm_count", "total_mem", "l2_bytes", "smem_per_block_optin",
                 "peak_bandwidth_gbs", "pci_bus_id"});
  Table t({"#", "name", "arch", "SMs", "memory GB", "L2 MB", "smem/block KB", "peak GB/s", "pci"});
  for (int i = 0; i < n; ++i) {
    const auto d = gpu::query_device(i);
    nlohmann::json dj = protocol::limits_to_json(d.limits);
    dj["ordinal"] = i;
    dj["name"] = d.name;
    dj["total_mem"] = d.total_mem;
    dj["pci_bus_id"] = d.pci_bus_id;
    dj["peak_bandwidth_gbs"] = d.peak_bandwidth_gbs();
    j["devices"].push_back(dj);
    t.add({std::to_string(i), d.name, d.limits.arch_flag(), std::to_string(d.limits.sm_count),
           fmt::format("{:.1f}", double(d.total_mem) / 1e9), fmt::format("{:.0f}", double(d.limits.l2_bytes) / 1048576.0),
           fmt::format("{}", d.limits.smem_per_block_optin / 1024), fmt::format("{:.0f}", d.peak_bandwidth_gbs()),
           d.pci_bus_id});
    csv.add({std::to_string(i), d.name, d.limits.arch_flag(), std::to_string(d.limits.sm_count),
             std::to_string(d.total_mem), std::to_string(d.limits.l2_bytes),
             std::to_string(d.limits.smem_per_block_optin), fmt::format("{:.0f}", d.peak_bandwidth_gbs()),
             d.pci_bus_id});
  }
  write_outputs(args.out, j, csv.text());
  if (args.out.human_on_stdout())
    fmt::print("driver {}  nvrtc {}  cudnn {}\n\n{}", gpu::driver_version_string(), gpu::nvrtc_version(),
               gpu::cudnn_version_string(), t.render());
  return 0;
}

}  // namespace fusetune::cli
