#include "tune/compile_all.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "codegen/compile_target.hpp"
#include "gpu/compiler.hpp"
#include "tune/compile_cache.hpp"

namespace fusetune::tune {

namespace {

// Keep a failure's log short enough for a table cell and a database row, but keep the
// first error lines, which name the cause.
std::string excerpt(const std::string& log, size_t max_chars = 2000) {
  return log.size() <= max_chars ? log : log.substr(0, max_chars) + "\n[... truncated]";
}

std::string first_error_line(const std::string& log) {
  size_t pos = log.find("error");
  if (pos == std::string::npos) pos = 0;
  size_t begin = log.rfind('\n', pos);
  begin = begin == std::string::npos ? 0 : begin + 1;
  size_t end = log.find('\n', pos);
  return log.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

protocol::VariantResult compile_variant(const codegen::Variant& v, const gpu::DeviceLimits& limits,
                              const CompileAllOptions& opts) {
  protocol::VariantResult r;
  r.variant = v;
  if (v.source.empty()) return r;  // library-only candidates (cudnn): nothing to compile

  const gpu::CompileOptions co = codegen::compile_options(v, opts.arch, opts.strict_fp32);
  try {
    std::optional<CompileCache> cache;
    if (!opts.cache_dir.empty()) cache.emplace(opts.cache_dir);
    const std::vector<std::string> option_list = gpu::nvrtc_options(co);
    if (cache) {
      if (auto hit = cache->find(v.source, option_list)) {
        r.compile = std::move(*hit);
        r.compile.from_cache = true;
        if (std::string why = device_limit_violation(v, r.compile, limits); !why.empty()) {
          r.status = protocol::Status::device_limits_exceeded;
          r.reason = why;
        }
        return r;
      }
    }
    gpu::CompileResult cr = gpu::compile_cuda(v.source, v.name + ".cu", co);
    r.compile.compile_ms = cr.compile_ms;
    r.compile.registers = cr.registers;
    for (const auto& k : cr.kernels)
      if (k.registers > 0) r.compile.kernel_registers[k.kernel] = k.registers;
    r.compile.spill_stores = cr.spill_stores;
    r.compile.spill_loads = cr.spill_loads;
    r.compile.stack_bytes = cr.stack_bytes;
    r.compile.smem_bytes = cr.smem_bytes;
    r.compile.options = fmt::format("{}", fmt::join(cr.options, " "));
    if (cr.status != gpu::CompileStatus::ok) {
      r.status = protocol::Status::compile_failed;
      r.reason = first_error_line(cr.log);
      r.log_excerpt = excerpt(cr.log);
      return r;
    }
    r.compile.cubin = std::move(cr.cubin);
    r.compile.ptx = std::move(cr.ptx);
    if (cache) cache->store(v.source, option_list, r.compile);
    if (std::string why = device_limit_violation(v, r.compile, limits); !why.empty()) {
      r.status = protocol::Status::device_limits_exceeded;
      r.reason = why;
    }
  } catch (const std::exception& e) {
    r.status = protocol::Status::compile_failed;
    r.reason = e.what();
  }
  return r;
}

std::string device_limit_violation(const codegen::Variant& v, const protocol::CompileFigures& c,
                                   const gpu::DeviceLimits& limits) {
  for (const auto& step : v.plan) {
    if (step.kind() != codegen::StepKind::kernel) continue;
    const auto& k = step.kernel();
    const uint64_t threads = k.launch.threads();
    if (threads > uint64_t(limits.max_threads_per_block))
      return fmt::format("{}: {} threads per block > {}", k.name, threads, limits.max_threads_per_block);
    const auto own = c.kernel_registers.find(k.name);
    const int regs = own != c.kernel_registers.end() ? own->second : c.registers;
    if (regs > 0 && uint64_t(regs) * threads > uint64_t(limits.regs_per_block))
      return fmt::format("{}: {} registers x {} threads > {} registers per block", k.name, regs, threads,
                         limits.regs_per_block);
    const int64_t smem = int64_t(c.smem_bytes) + int64_t(k.launch.smem_bytes);
    if (smem > limits.smem_per_block_optin)
      return fmt::format("{}: {} bytes of shared memory > {}", k.name, smem, limits.smem_per_block_optin);
  }
  return {};
}

std::vector<protocol::VariantResult> compile_all(const std::vector<codegen::Variant>& variants,
                                       const gpu::DeviceLimits& limits, const CompileAllOptions& opts) {
  std::vector<protocol::VariantResult> results(variants.size());
  unsigned jobs = opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, unsigned(std::max<size_t>(1, variants.size())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < variants.size(); i = next++) {
      results[i] = compile_variant(variants[i], limits, opts);
      if (opts.on_done) opts.on_done(results[i]);
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned j = 1; j < jobs; ++j) pool.emplace_back(work);
  work();
  return results;
}

}  // namespace fusetune::tune
