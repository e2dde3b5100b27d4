// VariadicOpSplitter: XLA's GPU kernels take at most kMaxParameters (128)
// parameters, so a concatenate with more operands is split into a tree of
// concatenates of at most 128 operands each. Per level, operands are
// grouped by 128 from the left; a trailing group of fewer than 128
// operands (after a first full group) passes to the next level unchanged,
// as in XLA.
#ifndef HLOGYM_PASSES_VARIADIC_OP_SPLITTER_H_
#define HLOGYM_PASSES_VARIADIC_OP_SPLITTER_H_

#include <cstdint>
#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

inline constexpr int64_t kMaxKernelParameters = 128;

class VariadicOpSplitter : public Pass {
 public:
  std::string_view name() const override { return "variadic-op-splitter"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_VARIADIC_OP_SPLITTER_H_
