#include "hlogym/env/opcode_tables.h"

#include <array>
#include <optional>

#include "absl/status/status.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// HloEnv's opcode numbers: the opcode list of its patched XLA, with
// `alternatives` inserted after atan2 (so every later number is one more
// than stock XLA's of that time).
constexpr std::array<std::string_view, 118> kHloEnvOpcodes = {
    "abs",                       // 0
    "add",                       // 1
    "add-dependency",            // 2
    "after-all",                 // 3
    "all-gather",                // 4
    "all-gather-start",          // 5
    "all-gather-done",           // 6
    "all-reduce",                // 7
    "all-reduce-start",          // 8
    "all-reduce-done",           // 9
    "all-to-all",                // 10
    "async-start",               // 11
    "async-update",              // 12
    "async-done",                // 13
    "atan2",                     // 14
    "alternatives",              // 15
    "batch-norm-grad",           // 16
    "batch-norm-inference",      // 17
    "batch-norm-training",       // 18
    "bitcast",                   // 19
    "bitcast-convert",           // 20
    "broadcast",                 // 21
    "call",                      // 22
    "ceil",                      // 23
    "cholesky",                  // 24
    "clamp",                     // 25
    "collective-permute",        // 26
    "collective-permute-start",  // 27
    "collective-permute-done",   // 28
    "count-leading-zeros",       // 29
    "compare",                   // 30
    "complex",                   // 31
    "concatenate",               // 32
    "conditional",               // 33
    "constant",                  // 34
    "convert",                   // 35
    "convolution",               // 36
    "copy",                      // 37
    "copy-done",                 // 38
    "copy-start",                // 39
    "cosine",                    // 40
    "custom-call",               // 41
    "divide",                    // 42
    "domain",                    // 43
    "dot",                       // 44
    "dynamic-slice",             // 45
    "dynamic-update-slice",      // 46
    "exponential",               // 47
    "exponential-minus-one",     // 48
    "fft",                       // 49
    "floor",                     // 50
    "fusion",                    // 51
    "gather",                    // 52
    "get-dimension-size",        // 53
    "set-dimension-size",        // 54
    "get-tuple-element",         // 55
    "imag",                      // 56
    "infeed",                    // 57
    "iota",                      // 58
    "is-finite",                 // 59
    "log",                       // 60
    "log-plus-one",              // 61
    "logistic",                  // 62
    "and",                       // 63
    "not",                       // 64
    "opt-barrier",               // 65
    "or",                        // 66
    "xor",                       // 67
    "map",                       // 68
    "maximum",                   // 69
    "minimum",                   // 70
    "multiply",                  // 71
    "negate",                    // 72
    "outfeed",                   // 73
    "pad",                       // 74
    "parameter",                 // 75
    "partition-id",              // 76
    "popcnt",                    // 77
    "power",                     // 78
    "real",                      // 79
    "recv",                      // 80
    "recv-done",                 // 81
    "reduce",                    // 82
    "reduce-precision",          // 83
    "reduce-scatter",            // 84
    "reduce-window",             // 85
    "remainder",                 // 86
    "replica-id",                // 87
    "reshape",                   // 88
    "dynamic-reshape",           // 89
    "reverse",                   // 90
    "rng",                       // 91
    "rng-get-and-update-state",  // 92
    "rng-bit-generator",         // 93
    "round-nearest-afz",         // 94
    "rsqrt",                     // 95
    "scatter",                   // 96
    "select",                    // 97
    "select-and-scatter",        // 98
    "send",                      // 99
    "send-done",                 // 100
    "shift-left",                // 101
    "shift-right-arithmetic",    // 102
    "shift-right-logical",       // 103
    "sign",                      // 104
    "sine",                      // 105
    "slice",                     // 106
    "sort",                      // 107
    "sqrt",                      // 108
    "cbrt",                      // 109
    "subtract",                  // 110
    "tanh",                      // 111
    "trace",                     // 112
    "transpose",                 // 113
    "triangular-solve",          // 114
    "tuple",                     // 115
    "tuple-select",              // 116
    "while",                     // 117
};

// kHloEnv number of each of our opcodes, -1 when absent. Built once from
// the names so that the two tables cannot drift apart.
const std::array<int16_t, kNumOpcodes>& HloEnvNumbers() {
  static const std::array<int16_t, kNumOpcodes> kTable = [] {
    std::array<int16_t, kNumOpcodes> t;
    t.fill(-1);
    for (size_t i = 0; i < kHloEnvOpcodes.size(); ++i) {
      std::optional<Opcode> op = ParseOpcode(kHloEnvOpcodes[i]);
      if (op.has_value()) t[static_cast<int>(*op)] = static_cast<int16_t>(i);
    }
    return t;
  }();
  return kTable;
}

}  // namespace

absl::StatusOr<int32_t> OpcodeNumber(Opcode op, OpcodeNumbering numbering) {
  const int index = static_cast<int>(op);
  if (index < 0 || index >= kNumOpcodes) {
    return absl::InvalidArgumentError(
        StrCat("opcode value ", index, " is out of range"));
  }
  if (numbering == OpcodeNumbering::kHloGym) return index;
  const int16_t n = HloEnvNumbers()[index];
  if (n < 0) {
    return absl::InvalidArgumentError(
        StrCat("opcode '", OpcodeName(op),
               "' has no number in HloEnv's opcode table (use the HloGym "
               "numbering for modules that contain it)"));
  }
  return n;
}

int32_t NumOpcodes(OpcodeNumbering numbering) {
  return numbering == OpcodeNumbering::kHloGym
             ? kNumOpcodes
             : static_cast<int32_t>(kHloEnvOpcodes.size());
}

std::string_view OpcodeNumberName(int32_t number, OpcodeNumbering numbering) {
  if (number < 0 || number >= NumOpcodes(numbering)) return {};
  if (numbering == OpcodeNumbering::kHloEnv) return kHloEnvOpcodes[number];
  return OpcodeName(static_cast<Opcode>(number));
}

OpcodeAttrWidths OpcodeAttrWidthsOf(Opcode op) {
  // One-hot groups have 7 entries for a dimension index (0..5, 6 = none).
  constexpr int32_t kDim = 7;
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kReduce:
    case Opcode::kReverse:
    case Opcode::kTranspose:
      return {0, 6 * kDim};
    case Opcode::kCompare:
      return {0, 6 + 4};
    case Opcode::kConvolution:
      return {16, 24 * kDim};
    case Opcode::kDot:
      return {0, 24 * kDim + 3};
    case Opcode::kDynamicSlice:
      return {6, 0};
    case Opcode::kGather:
      return {7, 18 * kDim + 2};
    case Opcode::kGetTupleElement:
      return {1, 0};
    case Opcode::kIota:
      return {0, kDim};
    case Opcode::kPad:
      return {18, 0};
    case Opcode::kScatter:
      return {1, 18 * kDim + 2 * 2};
    case Opcode::kSlice:
      return {18, 0};
    case Opcode::kSort:
      return {0, kDim + 2};
    case Opcode::kTriangularSolve:
      return {0, 2 * 3 + 4};
    case Opcode::kCustomCall:
      return {0, 13};
    default:
      return {0, 0};
  }
}

std::vector<int32_t> OpcodeAttrCountTable(OpcodeNumbering numbering) {
  std::vector<int32_t> table(2 * NumOpcodes(numbering), 0);
  for (int i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = static_cast<Opcode>(i);
    absl::StatusOr<int32_t> n = OpcodeNumber(op, numbering);
    if (!n.ok()) continue;
    OpcodeAttrWidths w = OpcodeAttrWidthsOf(op);
    // HloEnv's table lists set-dimension-size with a dimension one-hot that
    // its per-node extractor never emits; kept for schema compatibility.
    if (op == Opcode::kSetDimensionSize) w = {0, 6 * 7};
    table[2 * *n] = w.ints;
    table[2 * *n + 1] = w.one_hot;
  }
  return table;
}

int32_t XlaPrimitiveTypeNumber(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kInvalid:
      return 0;
    case PrimitiveType::kPred:
      return 1;
    case PrimitiveType::kS1:
      return 30;
    case PrimitiveType::kS2:
      return 26;
    case PrimitiveType::kS4:
      return 21;
    case PrimitiveType::kS8:
      return 2;
    case PrimitiveType::kS16:
      return 3;
    case PrimitiveType::kS32:
      return 4;
    case PrimitiveType::kS64:
      return 5;
    case PrimitiveType::kU1:
      return 31;
    case PrimitiveType::kU2:
      return 27;
    case PrimitiveType::kU4:
      return 22;
    case PrimitiveType::kU8:
      return 6;
    case PrimitiveType::kU16:
      return 7;
    case PrimitiveType::kU32:
      return 8;
    case PrimitiveType::kU64:
      return 9;
    case PrimitiveType::kF16:
      return 10;
    case PrimitiveType::kBF16:
      return 16;
    case PrimitiveType::kF32:
      return 11;
    case PrimitiveType::kF64:
      return 12;
    case PrimitiveType::kF8E5M2:
      return 19;
    case PrimitiveType::kF8E4M3:
      return 28;
    case PrimitiveType::kF8E4M3FN:
      return 20;
    case PrimitiveType::kF8E4M3B11FNUZ:
      return 23;
    case PrimitiveType::kF8E3M4:
      return 29;
    case PrimitiveType::kF8E5M2FNUZ:
      return 24;
    case PrimitiveType::kF8E4M3FNUZ:
      return 25;
    case PrimitiveType::kF8E8M0FNU:
      return 33;
    case PrimitiveType::kF4E2M1FN:
      return 32;
    case PrimitiveType::kF6E3M2FN:
      return 35;
    case PrimitiveType::kF6E2M3FN:
      return 36;
    case PrimitiveType::kC64:
      return 15;
    case PrimitiveType::kC128:
      return 18;
    case PrimitiveType::kToken:
      return 17;
    case PrimitiveType::kOpaque:
      return 14;
    case PrimitiveType::kTuple:
      return 13;
    case PrimitiveType::kBuffer:
      return 34;
    case PrimitiveType::kNumTypes:
      break;
  }
  return 0;
}

}  // namespace hlogym
