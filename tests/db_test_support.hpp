#pragma once
// Shared by tests/db_*_test.cpp: synthetic environments and records, file helpers.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "db/records.hpp"

namespace fusetune::db::testing {

inline Environment h200(const std::string& driver = "13.0") {
  Environment e;
  e.gpu_name = "NVIDIA H200";
  e.cc_major = 9;
  e.cc_minor = 0;
  e.sm_count = 132;
  e.mem_bytes = 150754820096;
  e.driver = driver;
  e.cuda_runtime = "13.0";
  e.nvrtc = "13.0";
  e.cudnn = "9.19.0";
  e.templates_hash = "0123456789abcdef";
  return e;
}

inline Environment a100() {
  Environment e = h200();
  e.gpu_name = "NVIDIA A100-SXM4-80GB";
  e.cc_major = 8;
  e.sm_count = 108;
  e.mem_bytes = 85899345920;
  return e;
}

inline ResultRecord result(const std::string& name, double median_ms, const std::string& candidate = "epilogue",
                           const std::string& key = "ca98e8d32aaaaf30", const std::string& math = "tf32") {
  ResultRecord r;
  r.problem_key = key;
  r.canonical = "conv2d(problem " + key + ")";
  r.math = math;
  r.candidate = candidate;
  r.variant_name = name;
  r.params_json = "{\"block\":256}";
  r.status = "ok";
  r.registers = 24;
  r.time_min_ms = median_ms * 0.99;
  r.time_median_ms = median_ms;
  r.time_max_ms = median_ms * 1.02;
  r.time_count = 40;
  r.kernel_median_ms = median_ms / 2;
  r.gbps = 4000.5;
  r.pct_copy = 94.1;
  r.max_abs = 1.5e-4;
  r.max_rel = 2e-4;
  r.rel_l2 = 3e-5;
  return r;
}

inline WinnerRecord winner(const Environment& env, const std::string& name, double median_ms,
                           const std::string& key = "ca98e8d32aaaaf30", const std::string& math = "tf32") {
  WinnerRecord w;
  w.env = env;
  w.problem_key = key;
  w.canonical = "conv2d(problem " + key + ")";
  w.math = math;
  w.candidate = "epilogue";
  w.variant_name = name;
  w.variant_json = "{\"name\":\"" + name + "\"}";
  w.compile_options = "--gpu-architecture=sm_90 -default-device";
  w.cubin = std::string("\x7f" "ELF\0\x01\x02", 7);
  w.ptx = ".version 8.0\n.target sm_90\n";
  w.time_median_ms = median_ms;
  w.time_spread = 0.01;
  w.unfused_median_ms = 4.4;
  w.cudnn_median_ms = 1.98;
  w.cudnn_algo = "IMPLICIT_PRECOMP_GEMM (tf32)";
  w.conv_choices = R"json({"0":{"algo":1,"label":"IMPLICIT_PRECOMP_GEMM (tf32)","math_type":1,"time_ms":1.5}})json";
  return w;
}

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

}  // namespace fusetune::db::testing
