// DotDecomposer, after XLA's pass of the same name.
//
// A dot is canonical when it has exactly one contracting dimension, at most
// one non-contracting dimension per operand and batch dimensions 0..b-1 on
// both sides. Other dots are rewritten to
//   reshape(dot([batch, m, k], [batch, k, n]))
// by transposing each operand to (batch, non-contracting, contracting) for
// the lhs and (batch, contracting, non-contracting) for the rhs and
// reshaping the non-contracting and contracting groups into one dimension
// each (a non-contracting group of size 1 is dropped). Sparse dots and
// dynamic shapes are left alone.
#ifndef HLOGYM_PASSES_DOT_DECOMPOSER_H_
#define HLOGYM_PASSES_DOT_DECOMPOSER_H_

#include <string_view>

#include "hlogym/passes/pass.h"

namespace hlogym {

class DotDecomposer : public Pass {
 public:
  std::string_view name() const override { return "dot-decomposer"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_DOT_DECOMPOSER_H_
