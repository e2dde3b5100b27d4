// Row-major index arithmetic shared by the kernels.
#ifndef HLOGYM_EVAL_INDEX_UTIL_H_
#define HLOGYM_EVAL_INDEX_UTIL_H_

#include <cstdint>

#include "hlogym/ir/shape.h"

namespace hlogym {

// Row-major element strides of `dims` (the last dimension has stride 1).
inline DimVector RowMajorStrides(const DimVector& dims) {
  DimVector strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// Advances a multi-dimensional index in row-major order. Returns false after
// the last index (the index wraps back to all zeros).
inline bool NextIndex(const DimVector& dims, DimVector* index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++(*index)[i] < dims[i]) return true;
    (*index)[i] = 0;
  }
  return false;
}

// Linear row-major offset of `index` given `strides`.
inline int64_t LinearIndex(const DimVector& strides, const DimVector& index) {
  int64_t off = 0;
  for (size_t i = 0; i < index.size(); ++i) off += index[i] * strides[i];
  return off;
}

}  // namespace hlogym

#endif  // HLOGYM_EVAL_INDEX_UTIL_H_
