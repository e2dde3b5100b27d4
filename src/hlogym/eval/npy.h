// NumPy .npy and .npz files as interpreter inputs and outputs.
//
// Element types map to NumPy dtypes as follows (docs/interpreter.md has the
// full table): pred <-> bool, s8..s64 <-> int8..int64, u8..u64 <->
// uint8..uint64, f16 <-> float16, f32 <-> float32, f64 <-> float64, c64 <->
// complex64, c128 <-> complex128. Types NumPy lacks: s4/s2/s1 are int8 and
// u4/u2/u1 uint8 arrays (values must fit the narrow type); bf16 and the
// f8/f6/f4 types are written as float32 (exactly) and read from float16,
// float32 or float64 arrays, rounded to nearest even.
//
// Argument and output files: the array leaves of all entry parameters,
// flattened depth-first in parameter order (tokens skipped), are named
// param0, param1, ...; the array leaves of the result are out0, out1, ...
// A directory holds NAME.npy files, an .npz archive holds NAME.npy members.
#ifndef HLOGYM_EVAL_NPY_H_
#define HLOGYM_EVAL_NPY_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlogym/ir/literal.h"

namespace hlogym {

// The NumPy dtype a literal of `type` is written as ("<f4", "|b1"), or ""
// for types without arrays (tuple, token, opaque).
std::string NpyDescrFor(PrimitiveType type);

// Encodes an array literal as the bytes of an .npy file (format 1.0, or 2.0
// when the header needs more than 64 KiB; little-endian; C order).
absl::StatusOr<std::string> EncodeNpy(const Literal& array);

// Decodes .npy bytes into a literal of `expected`'s element type and
// dimensions (layouts ignored). Accepts format versions 1.0, 2.0 and 3.0,
// either byte order and Fortran order. `name` prefixes errors, e.g.
// "param1.npy: expected f32[2,3], got float64 (3,)".
absl::StatusOr<Literal> DecodeNpy(std::string_view bytes, const Shape& expected,
                                  std::string_view name);

// Decodes .npy bytes into a literal of the dtype's natural element type
// (float32 -> f32, bool -> pred, ...) and the file's dimensions.
absl::StatusOr<Literal> DecodeNpyAnyType(std::string_view bytes,
                                         std::string_view name);

// File versions of the above.
absl::Status WriteNpy(const Literal& array, const std::string& path);
absl::StatusOr<Literal> ReadNpy(const std::string& path, const Shape& expected);

// Raw .npz members: (name without ".npy", file bytes), in archive order.
// Stored and deflated members are accepted.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ReadNpz(
    const std::string& path);
// Writes an .npz archive of the given arrays (stored, not compressed),
// member names NAME.npy. Replaces an existing file.
absl::Status WriteNpz(
    absl::Span<const std::pair<std::string, const Literal*>> arrays,
    const std::string& path);

// Array leaves of `literal` in depth-first order, tokens skipped.
std::vector<const Literal*> ArrayLeaves(const Literal& literal);

// Reads the entry arguments from a directory of param<i>.npy files or one
// .npz archive with members param<i>. Returns one literal per parameter
// (tuple parameters are rebuilt from their leaves; tokens are created).
// Every expected array must be present; unexpected names are errors.
absl::StatusOr<std::vector<Literal>> ReadArguments(
    const std::string& path, absl::Span<const Shape> parameter_shapes);

// Writes arguments the way ReadArguments reads them.
absl::Status WriteArguments(absl::Span<const Literal> args,
                            const std::string& path);

// Writes the array leaves of `result` as out<j>: into a directory (created
// if needed) of out<j>.npy files, or into one archive when `path` ends in
// ".npz".
absl::Status WriteOutputs(const Literal& result, const std::string& path);

}  // namespace hlogym

#endif  // HLOGYM_EVAL_NPY_H_
