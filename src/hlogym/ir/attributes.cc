#include "hlogym/ir/attributes.h"

#include <algorithm>
#include <numeric>

namespace hlogym {

std::string_view ComparisonDirectionName(ComparisonDirection d) {
  static constexpr std::string_view kNames[] = {"EQ", "NE", "LT",
                                                "LE", "GT", "GE"};
  return kNames[static_cast<int>(d)];
}

std::string_view ComparisonTypeName(ComparisonType t) {
  static constexpr std::string_view kNames[] = {"", "FLOAT", "TOTALORDER",
                                                "SIGNED", "UNSIGNED"};
  return kNames[static_cast<int>(t)];
}

std::string_view FusionKindName(FusionKind k) {
  static constexpr std::string_view kNames[] = {"kLoop", "kInput", "kOutput",
                                                "kCustom"};
  return kNames[static_cast<int>(k)];
}

std::string_view PrecisionName(Precision p) {
  static constexpr std::string_view kNames[] = {"default", "high", "highest",
                                                "packed_nibble"};
  return kNames[static_cast<int>(p)];
}

std::string_view CustomCallApiVersionName(CustomCallApiVersion v) {
  static constexpr std::string_view kNames[] = {
      "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
      "API_VERSION_STATUS_RETURNING", "API_VERSION_STATUS_RETURNING_UNIFIED",
      "API_VERSION_TYPED_FFI"};
  return kNames[static_cast<int>(v)];
}

int64_t ReplicaGroups::LargestGroupSize() const {
  if (form == Form::kMesh) return -1;
  if (form == Form::kIota) return std::max<int64_t>(group_size, 1);
  int64_t largest = 1;
  for (const auto& g : groups) {
    largest = std::max<int64_t>(largest, static_cast<int64_t>(g.size()));
  }
  return largest;
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expand() const {
  if (form == Form::kExplicit) return groups;
  if (form == Form::kMesh) return {};
  // Iota form: iota(N) reshaped to iota_reshape_dims, transposed by the
  // permutation, flattened, then cut into num_groups rows of group_size.
  int64_t n = 1;
  for (int64_t d : iota_reshape_dims) n *= d;
  if (n != num_groups * group_size || n <= 0 || n > (int64_t{1} << 24)) {
    return {};
  }
  const size_t rank = iota_reshape_dims.size();
  std::vector<int64_t> perm = iota_transpose_perm;
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.begin(), perm.end(), 0);
  }
  if (perm.size() != rank) return {};
  // Strides of the source (row-major over reshape dims).
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;) {
    stride[i - 1] = stride[i] * iota_reshape_dims[i];
  }
  std::vector<int64_t> out_dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || static_cast<size_t>(perm[i]) >= rank) return {};
    out_dims[i] = iota_reshape_dims[perm[i]];
  }
  std::vector<int64_t> flat;
  flat.reserve(n);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += idx[i] * stride[perm[i]];
    flat.push_back(src);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_dims[d]) break;
      idx[d] = 0;
    }
  }
  std::vector<std::vector<int64_t>> result(num_groups);
  for (int64_t g = 0; g < num_groups; ++g) {
    result[g].assign(flat.begin() + g * group_size,
                     flat.begin() + (g + 1) * group_size);
  }
  return result;
}

}  // namespace hlogym
