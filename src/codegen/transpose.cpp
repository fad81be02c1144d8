#include "codegen/transpose.hpp"

#include "codegen/param_space.hpp"
#include "codegen/shape.hpp"

namespace fusetune::codegen {

namespace {

constexpr int64_t kTileCols = 32;  // fixed in ft_transpose_block

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

LaunchConfig TransposeConfig::launch() const {
  LaunchConfig l;
  l.grid = {uint32_t(batch * ceil_div(rows, tile_r) * ceil_div(cols, kTileCols)), 1, 1};
  l.block = {uint32_t(threads), 1, 1};
  return l;
}

std::vector<std::pair<std::string, int64_t>> TransposeConfig::params() const {
  if (param_prefix.empty()) return {};
  return {{param_prefix + "_tile", tile_r},
          {param_prefix + "_vec", vec_in},
          {param_prefix + "_ovec", vec_out},
          {param_prefix + "_block", threads}};
}

std::string TransposeConfig::instantiation() const {
  std::string args = kernel_name + ", " + std::to_string(batch) + ", " + std::to_string(rows) + ", " +
                     std::to_string(cols) + ", ";
  if (param_prefix.empty()) {
    args += std::to_string(tile_r) + ", " + std::to_string(vec_in) + ", " + std::to_string(vec_out) + ", " +
            std::to_string(threads);
  } else {
    args += macro_name(param_prefix + "_tile") + ", " + macro_name(param_prefix + "_vec") + ", " +
            macro_name(param_prefix + "_ovec") + ", " + macro_name(param_prefix + "_block");
  }
  return "// " + what + "\nFT_DEFINE_TRANSPOSE(" + args + ")\n";
}

double TransposeConfig::bytes() const { return 2.0 * fp32_bytes(batch * rows * cols); }

int64_t widest_vector(int64_t extent) {
  if (extent % 4 == 0) return 4;
  if (extent % 2 == 0) return 2;
  return 1;
}

TransposeConfig default_transpose(std::string kernel_name, std::string what, int64_t batch, int64_t rows,
                                  int64_t cols) {
  TransposeConfig t;
  t.kernel_name = std::move(kernel_name);
  t.what = std::move(what);
  t.batch = batch;
  t.rows = rows;
  t.cols = cols;
  // 64-row tiles give each block 8 KB to move; a short matrix gets 32 rows to waste less.
  t.tile_r = rows <= 32 ? 32 : 64;
  t.vec_in = widest_vector(cols);
  t.vec_out = widest_vector(rows);
  t.threads = 256;  // 256 * vec_in <= 32 * tile_r for every vec_in <= 4: each thread loads
  return t;
}

}  // namespace fusetune::codegen
