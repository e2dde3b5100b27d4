// Numbering tables of the graph observation: opcode numbers (HloGym's own
// enum or HloEnv's 118-opcode table), per-opcode attribute widths, and
// XLA's PrimitiveType numbers for element types.
#ifndef HLOGYM_ENV_OPCODE_TABLES_H_
#define HLOGYM_ENV_OPCODE_TABLES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlogym/ir/opcode.h"
#include "hlogym/ir/primitive_type.h"

namespace hlogym {

enum class OpcodeNumbering {
  // Our Opcode enum values (hlogym/ir/opcode.h): every opcode we have.
  kHloGym,
  // HloEnv's table (its patched XLA opcode enum, `alternatives` = 15, 118
  // entries). Opcodes absent from it (e.g. erf, tan, topk) have no number.
  kHloEnv,
};

// The number of `op` in `numbering`. kHloEnv: an opcode absent from the
// table is an InvalidArgument error naming it.
absl::StatusOr<int32_t> OpcodeNumber(Opcode op, OpcodeNumbering numbering);
// Size of the numbering: kNumOpcodes for kHloGym, 118 for kHloEnv.
int32_t NumOpcodes(OpcodeNumbering numbering);
// The text name of opcode number `number` in `numbering` (HloEnv's table
// includes "trace" and "tuple-select", which HloGym does not model). Empty
// when out of range.
std::string_view OpcodeNumberName(int32_t number, OpcodeNumbering numbering);

// Widths of the per-node attribute vector of each opcode: (number of plain
// integers, total width of the one-hot groups).
struct OpcodeAttrWidths {
  int32_t ints = 0;
  int32_t one_hot = 0;
};
// What the per-node extractor emits for `op` (see observation.h).
OpcodeAttrWidths OpcodeAttrWidthsOf(Opcode op);
// The graph-level table: 2 * NumOpcodes(numbering) entries, (ints, one-hot)
// per opcode number. As in HloEnv, set-dimension-size is listed as (0, 42)
// although the per-node extractor emits nothing for it; opcodes without
// attributes (and HloEnv's numbers HloGym lacks) are (0, 0).
std::vector<int32_t> OpcodeAttrCountTable(OpcodeNumbering numbering);

// XLA's PrimitiveType number (xla_data.proto: PRED=1, S8=2, ..., TUPLE=13,
// OPAQUE_TYPE=14, TOKEN=17, BF16=16, C128=18, F8E5M2=19, ..., BUFFER=34).
// The f6 types, which that enum does not number, get 35 (f6e3m2fn) and 36
// (f6e2m3fn); kInvalid is 0.
int32_t XlaPrimitiveTypeNumber(PrimitiveType type);

}  // namespace hlogym

#endif  // HLOGYM_ENV_OPCODE_TABLES_H_
