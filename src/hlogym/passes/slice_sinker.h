// SliceSinker, after XLA's pass of the same name.
//
// Elementwise ops whose operands are all slices taken at the same offsets
// (same starts, limits and strides) from the same sources of equal
// dimensions are grouped with the similar ops on other slices of those
// sources (same opcode and result type, operand i sliced from the same
// source i). When the group covers at least as many elements as a source,
// one op runs on the sources and each member becomes a slice of it:
//   add(slice(a, s0), slice(b, s0)), add(slice(a, s1), slice(b, s1))
//     -> slice(add(a, b), s0), slice(add(a, b), s1).
#ifndef HLOGYM_PASSES_SLICE_SINKER_H_
#define HLOGYM_PASSES_SLICE_SINKER_H_

#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

class SliceSinker : public Pass {
 public:
  std::string_view name() const override { return "slice-sinker"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SLICE_SINKER_H_
