#pragma once
// UniqueHandle<Handle, Deleter>: owns one handle of a C API (a CUDA event, stream, module,
// context, allocation; an nvrtcProgram; a cuDNN handle or descriptor; an sqlite3*) and
// releases it exactly once. Move-only: the moved-from object holds the empty handle. This is
// the move constructor, move assignment and destructor every handle type would otherwise
// repeat (STYLE.md 5), written once.
//
// std::unique_ptr covers pointer handles only; this also takes value handles (CUdeviceptr, a
// struct of address and size) and stateful deleters (a primary context is released through
// its device). Handle{} is the empty handle. The deleter must be noexcept: destructors never
// throw, so a failed release is reported (the _NOEXCEPT check macros) and otherwise ignored.
//
//   struct EventDestroy { void operator()(CUevent e) const noexcept; };
//   UniqueHandle<CUevent, EventDestroy> event_;
//   CUevent e = nullptr;
//   FT_CU_CALL(driver().cuEventCreate(&e, flags));
//   event_.reset(e);
#include <concepts>
#include <type_traits>
#include <utility>

namespace fusetune {

template <typename Handle, typename Deleter>
  requires std::equality_comparable<Handle> && std::is_nothrow_default_constructible_v<Handle> &&
           std::is_nothrow_move_constructible_v<Deleter> && std::is_nothrow_invocable_v<Deleter&, Handle>
class UniqueHandle {
 public:
  UniqueHandle() noexcept = default;
  explicit UniqueHandle(Handle handle, Deleter deleter = Deleter{}) noexcept
      : handle_(std::move(handle)), deleter_(std::move(deleter)) {}
  ~UniqueHandle() { reset(); }

  UniqueHandle(UniqueHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, Handle{})), deleter_(std::move(other.deleter_)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
      deleter_ = std::move(other.deleter_);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  [[nodiscard]] const Handle& get() const noexcept { return handle_; }
  [[nodiscard]] const Deleter& deleter() const noexcept { return deleter_; }
  [[nodiscard]] explicit operator bool() const noexcept { return !(handle_ == Handle{}); }

  // Releases the current handle (if any) and owns `handle` instead.
  void reset(Handle handle = Handle{}) noexcept {
    Handle old = std::exchange(handle_, std::move(handle));
    if (!(old == Handle{})) deleter_(std::move(old));
  }
  // Gives up ownership without releasing.
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, Handle{}); }

 private:
  Handle handle_{};
  [[no_unique_address]] Deleter deleter_{};
};

}  // namespace fusetune
