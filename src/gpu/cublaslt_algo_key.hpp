#pragma once
// The configuration that names one cuBLASLt matmul algorithm: the fields
// cublasLtMatmulAlgoConfigGetAttribute reads from a heuristic result and that
// cublasLtMatmulAlgoInit + ConfigSetAttribute write back, so a stored choice is rebuilt without
// asking the heuristic again (GemmPlan::rebuild). Plain data with one text form; no cuBLAS types,
// so the text form is tested without a GPU (cublaslt_layout_test.cpp).
//
// The numbers are cuBLASLt's enum values (cublasLtMatmulTile_t, cublasLtMatmulStages_t, ...),
// stable across releases of one major version. They do not say which GPU or cuBLASLt built the
// list: whoever stores a key keys it by those too (STYLE.md 6), and a key that no longer
// applies is refused by rebuild with cuBLASLt's reason.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fusetune::gpu {

struct CublasLtAlgoKey {
  int32_t id = 0;            // CUBLASLT_ALGO_CONFIG_ID
  uint32_t tile = 0;         // _TILE_ID (cublasLtMatmulTile_t)
  uint32_t stages = 0;       // _STAGES_ID (cublasLtMatmulStages_t)
  int32_t splitk = 1;        // _SPLITK_NUM
  uint32_t reduction = 0;    // _REDUCTION_SCHEME (cublasLtReductionScheme_t)
  uint32_t swizzle = 0;      // _CTA_SWIZZLING
  uint32_t custom = 0;       // _CUSTOM_OPTION
  uint16_t inner_shape = 0;  // _INNER_SHAPE_ID (cublasLtMatmulInnerShape_t)
  uint16_t cluster = 0;      // _CLUSTER_SHAPE_ID (cublasLtClusterShape_t)

  bool operator==(const CublasLtAlgoKey&) const = default;

  // "id=6,tile=20,stages=12,splitk=1,reduction=0,swizzle=0,custom=0,inner=0,cluster=0": every
  // field, in this order, so equal keys have equal texts.
  [[nodiscard]] std::string text() const;
};

// The inverse of text(): exactly its fields in its order, decimal, in range. nullopt (and the
// reason in *why) for anything else, e.g. a key written by a later fusetune with more fields.
[[nodiscard]] std::optional<CublasLtAlgoKey> parse_cublaslt_algo_key(std::string_view text,
                                                                     std::string* why = nullptr);

}  // namespace fusetune::gpu
