#pragma once
// How a worker verifies within device memory, decided once at setup (GPU-free, unit-tested):
// with one whole float64 answer kept per input draw (the answers are computed once and every
// variant is compared with them), or, when those do not fit and the problem is independent per
// image (reference/image_slices.hpp), with the answer recomputed slice by slice of images for
// each comparison. Only inputs and candidate buffers that do not fit by themselves refuse the
// problem. A version-2 problem keeps whole answers (GPU main-operator terms, CPU stages) or is refused.
#include <cstdint>

#include "spec/problem.hpp"

namespace fusetune::worker {

struct VerifyMemory {
  int64_t slice_images = 0;  // 0: whole answers, one per draw; else images per slice
  double need = 0;           // bytes this way needs at its peak (estimate)
  bool forced = false;       // sliced by the test knob, not for want of memory
};

// Of the free memory, what setup lets verification plan with: the rest is for what the estimate
// leaves out (cuDNN workspaces, the driver's own use, fragmentation).
inline constexpr double kUsableShare = 0.9;
// Of what is usable after inputs and candidate buffers, the share one slice's answer may take:
// candidate buffers come and go as variants run (BufferPool) and four conv outputs is a guess.
inline constexpr double kSliceShare = 0.5;

// Device memory of what is there whatever the answers: `draws` input draws and about four
// conv-output-sized scratch buffers plus an input-sized one that the plans use.
[[nodiscard]] double fixed_bytes(const spec::Problem& p, int draws);

// The way to verify `p` with `draws` draws in `free_bytes`. forced_slice_images > 0 (tests,
// FUSETUNE_TEST_REF_SLICE_IMAGES) slices by that many images (at most n) even where whole
// answers fit, if the problem may be sliced. Throws InputError naming the bytes needed and free
// when even inputs, buffers and one image's answer do not fit (or whole answers do not, for a
// problem that may not be sliced).
[[nodiscard]] VerifyMemory plan_verify_memory(const spec::Problem& p, int draws, double free_bytes,
                                              int64_t forced_slice_images = 0);

}  // namespace fusetune::worker
