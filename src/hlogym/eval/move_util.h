// Helpers shared by the data-movement kernels (data_movement.cc,
// gather_scatter.cc, sort.cc).
#ifndef HLOGYM_EVAL_MOVE_UTIL_H_
#define HLOGYM_EVAL_MOVE_UTIL_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "hlogym/ir/instruction.h"
#include "hlogym/ir/literal.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace move_internal {

// Copies elements: for every index i over `dims`,
// dst[sum i_d * dst_strides_d] = src[sum i_d * src_strides_d] (strides in
// elements; source strides may be zero or negative). Defined in
// data_movement.cc.
void StridedCopy(int width, const uint8_t* src, uint8_t* dst,
                 const DimVector& dims, const DimVector& src_strides,
                 const DimVector& dst_strides);

// "%name: opcode msg".
inline absl::Status Error(const Instruction& inst, const std::string& msg) {
  return absl::InvalidArgumentError(
      StrCat("%", inst.name(), ": ", OpcodeName(inst.opcode()), " ", msg));
}

// Operand i is a known array whose data matches its static shape.
inline absl::Status CheckArray(const Instruction& inst, const Literal* l,
                               int64_t i) {
  if (l == nullptr || !l->shape().IsArray()) {
    return Error(inst, StrCat("operand ", i, " is not an array"));
  }
  if (l->is_unknown()) {
    return Error(inst, StrCat("operand ", i, " has unknown contents"));
  }
  for (int64_t d : l->shape().dimensions()) {
    if (d < 0) return Error(inst, StrCat("operand ", i, " has no static size"));
  }
  const int64_t n = l->shape().ElementsIn();
  if (n == std::numeric_limits<int64_t>::max() ||
      l->size_bytes() !=
          static_cast<size_t>(n) * ByteWidth(l->shape().element_type())) {
    return Error(inst,
                 StrCat("operand ", i, "'s data does not match its shape"));
  }
  return absl::OkStatus();
}

}  // namespace move_internal
}  // namespace hlogym

#endif  // HLOGYM_EVAL_MOVE_UTIL_H_
