#include "hlogym/ir/opcode.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace hlogym {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr std::array<OpcodeInfo, kNumOpcodes> kOpcodes = {{
#define HLOGYM_OPCODE_INFO(e, s, a) {s, a},
    HLOGYM_OPCODE_LIST(HLOGYM_OPCODE_INFO)
#undef HLOGYM_OPCODE_INFO
}};

// Sorted (name, opcode) table for binary search.
struct NameTable {
  std::array<std::pair<std::string_view, Opcode>, kNumOpcodes> entries;
  NameTable() {
    for (int i = 0; i < kNumOpcodes; ++i) {
      entries[i] = {kOpcodes[i].name, static_cast<Opcode>(i)};
    }
    std::sort(entries.begin(), entries.end());
  }
};

}  // namespace

std::string_view OpcodeName(Opcode op) {
  auto i = static_cast<size_t>(op);
  return i < kOpcodes.size() ? kOpcodes[i].name : "<invalid-opcode>";
}

std::optional<Opcode> ParseOpcode(std::string_view name) {
  static const NameTable table;
  auto it = std::lower_bound(
      table.entries.begin(), table.entries.end(), name,
      [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != table.entries.end() && it->first == name) return it->second;
  return std::nullopt;
}

int OpcodeArity(Opcode op) {
  auto i = static_cast<size_t>(op);
  return i < kOpcodes.size() ? kOpcodes[i].arity : -1;
}

bool IsUnaryElementwise(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kCosh:
    case Opcode::kCosine:
    case Opcode::kCountLeadingZeros:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsBinaryElementwise(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMulhi:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsTernaryElementwise(Opcode op) {
  return op == Opcode::kSelect || op == Opcode::kClamp;
}

bool IsElementwise(Opcode op) {
  return IsUnaryElementwise(op) || IsBinaryElementwise(op) ||
         IsTernaryElementwise(op) || op == Opcode::kConvert ||
         op == Opcode::kBitcastConvert || op == Opcode::kReducePrecision ||
         op == Opcode::kStochasticConvert;
}

bool OpcodeShapeInferable(Opcode op) {
  if (IsUnaryElementwise(op) || IsBinaryElementwise(op) ||
      IsTernaryElementwise(op)) {
    return true;
  }
  switch (op) {
    case Opcode::kAddDependency:
    case Opcode::kAfterAll:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kBroadcast:
    case Opcode::kCall:
    case Opcode::kCholesky:
    case Opcode::kConcatenate:
    case Opcode::kConditional:
    case Opcode::kConvolution:
    case Opcode::kCopy:
    case Opcode::kDomain:
    case Opcode::kDot:
    case Opcode::kFft:
    case Opcode::kGather:
    case Opcode::kGetDimensionSize:
    case Opcode::kGetTupleElement:
    case Opcode::kMap:
    case Opcode::kOptimizationBarrier:
    case Opcode::kPad:
    case Opcode::kPartitionId:
    case Opcode::kRaggedDot:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kReplicaId:
    case Opcode::kReverse:
    case Opcode::kScaledDot:
    case Opcode::kScan:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSetDimensionSize:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kTranspose:
    case Opcode::kTriangularSolve:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

bool IsTranscendental(Opcode op) {
  switch (op) {
    case Opcode::kExp:
    case Opcode::kLog:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSin:
    case Opcode::kCosine:
    case Opcode::kTan:
    case Opcode::kErf:
    case Opcode::kExpm1:
    case Opcode::kLog1p:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtanh:
    case Opcode::kSinh:
    case Opcode::kCosh:
      return true;
    default:
      return false;
  }
}

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kRaggedAllToAll:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

bool IsAsyncStartOpcode(Opcode op) {
  return op == Opcode::kAllGatherStart || op == Opcode::kAllReduceStart ||
         op == Opcode::kCollectivePermuteStart || op == Opcode::kCopyStart ||
         op == Opcode::kAsyncStart;
}

bool IsAsyncDoneOpcode(Opcode op) {
  return op == Opcode::kAllGatherDone || op == Opcode::kAllReduceDone ||
         op == Opcode::kCollectivePermuteDone || op == Opcode::kCopyDone ||
         op == Opcode::kAsyncDone;
}

}  // namespace hlogym
