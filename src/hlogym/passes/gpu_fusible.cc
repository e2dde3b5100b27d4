#include "hlogym/passes/gpu_fusible.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlogym/cost/cost_analysis.h"
#include "hlogym/ir/primitive_type.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

// Thresholds of the tiled transpose emitter.
constexpr int64_t kMinDimensionToTransposeTiled = 16;
constexpr int64_t kMinDimensionToTransposeTiled2 = 8;
constexpr int64_t kMinTotalDimensionsToTransposeTiled = 64 * 128;
// Reduction emitter: threads along a row and tiles (race-free bounds).
constexpr int64_t kWarpSize = 32;
constexpr int64_t kMinThreadsXRowReduction = 1024;
constexpr int64_t kRowReductionTileX = 16;
constexpr int64_t kColumnReductionTileY = 128;
constexpr int64_t kBatchedReductionRaceFreeBound = 8;
// CreatesHeavyComputation: inputs per output that make an op costly.
constexpr int64_t kMaxInputsPerOutput = 10;
// PriorityFusion: a reduce reading this many inputs per output.
constexpr int64_t kSignificantReduceRatio = 16;

const Computation* FusedComputation(const Instruction& inst) {
  if (inst.opcode() != Opcode::kFusion) return nullptr;
  const Computation* c = inst.fused_computation();
  if (c == nullptr || c->root_instruction() == nullptr) return nullptr;
  return c;
}

bool IsCustomFusion(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fusion_kind() == FusionKind::kCustom;
}

bool IsLoopFusion(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fusion_kind() == FusionKind::kLoop;
}

// Instructions of a fused computation other than its parameters.
std::vector<const Instruction*> FusedInstructions(const Computation& c) {
  std::vector<const Instruction*> out;
  c.ForEachInstruction([&](const Instruction* i) {
    if (i->opcode() != Opcode::kParameter) out.push_back(i);
  });
  return out;
}

// Elements of an array shape, or of the first leaf of a tuple (variadic
// ops produce tuples of equally shaped arrays).
int64_t LeafElements(const Shape& s) {
  const Shape* p = &s;
  while (p->IsTuple()) {
    if (p->tuple_shapes_size() == 0) return 0;
    p = &p->tuple_shapes(0);
  }
  return p->IsArray() ? p->ElementsIn() : 0;
}

// HloInstruction::IsFusible: the instruction may be part of a fusion at all.
bool BaseFusible(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDomain:
    case Opcode::kParameter:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kAlternatives:
      return false;
    case Opcode::kFusion:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return true;
    case Opcode::kRng:
      return inst.user_count() <= 1;
    default:
      return !inst.HasSideEffect();
  }
}

// HloInstruction::IsElementwise: elementwise opcodes, bitcast-converts that
// keep the bit width, and maps over all dimensions in order.
bool IsElementwiseInst(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (op == Opcode::kCopy) return true;
  if (op == Opcode::kBitcastConvert) {
    return inst.operand_count() == 1 && inst.shape().IsArray() &&
           inst.operand(0)->shape().IsArray() &&
           BitWidth(inst.shape().element_type()) ==
               BitWidth(inst.operand(0)->shape().element_type());
  }
  if (op == Opcode::kMap) {
    if (!inst.shape().IsArray()) return false;
    const DimVector& d = inst.dimensions();
    if (d.empty()) return true;
    if (static_cast<int64_t>(d.size()) != inst.shape().rank()) return false;
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  }
  return IsElementwise(op);
}

// Sizes of the dimensions larger than 1, major to minor in memory.
DimVector PhysicalNonTrivialSizes(const Shape& s) {
  DimVector sizes;
  const DimVector m2m = PhysicalMinorToMajor(s);
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    if (*it < 0 || *it >= s.rank()) return {};
    if (s.dimensions(*it) != 1) sizes.push_back(s.dimensions(*it));
  }
  return sizes;
}

// Memory order equals logical (row-major) order for dimensions > 1.
bool IsRowMajorIgnoringTrivialDims(const Shape& s) {
  const DimVector m2m = PhysicalMinorToMajor(s);
  int64_t last = -1;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    if (*it < 0 || *it >= s.rank()) return false;
    if (s.dimensions(*it) == 1) continue;
    if (*it < last) return false;
    last = *it;
  }
  return true;
}

// Same dimensions and memory order (element types ignored).
bool EqualIgnoringElementType(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return a.SameDimensions(b);
  return a.SameDimensions(b) &&
         PhysicalMinorToMajor(a) == PhysicalMinorToMajor(b);
}

// ShapeUtil::IsReshapeOrTransposeBitcast (element types ignored): the
// bytes are laid out identically, either because both shapes walk their
// elements in logical order or because they list the same sizes in memory
// order.
bool IsReshapeOrTransposeBitcast(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || a.is_dynamic() || b.is_dynamic()) {
    return false;
  }
  if (a.ElementsIn() != b.ElementsIn()) return false;
  if (IsRowMajorIgnoringTrivialDims(a) && IsRowMajorIgnoringTrivialDims(b)) {
    return true;
  }
  return PhysicalNonTrivialSizes(a) == PhysicalNonTrivialSizes(b);
}

bool IsReshapeBitcast(const Instruction& inst) {
  return inst.operand_count() == 1 &&
         IsReshapeOrTransposeBitcast(inst.operand(0)->shape(), inst.shape()) &&
         inst.operand(0)->shape().element_type() == inst.shape().element_type();
}

}  // namespace

bool IsIntermediateIgnoringUsers(const Instruction& inst,
                                 int allowed_operand_count) {
  if (inst.operand_count() == 0 ||
      inst.operand_count() > allowed_operand_count) {
    return false;
  }
  if (inst.opcode() != Opcode::kCopy && IsElementwiseInst(inst)) return true;
  switch (inst.opcode()) {
    case Opcode::kBitcast:
      return true;
    case Opcode::kReshape:
      return IsReshapeBitcast(inst);
    case Opcode::kTranspose:
      return IsBitcastTranspose(inst);
    default:
      return false;
  }
}

namespace {

// Walks up from `root` through intermediate ops; stops at the fusion's
// parameters (the kernel boundary).
const Instruction* WalkToHero(const Instruction* root) {
  const Instruction* h = root;
  while (IsIntermediate(*h, 1)) {
    const Instruction* o = h->operand(0);
    if (o->opcode() == Opcode::kParameter) break;
    h = o;
  }
  return h;
}

bool IsRealReductionInst(const Instruction& inst) {
  return inst.opcode() == Opcode::kReduce && IsRealReduction(inst);
}

// A transpose that moves data but that the tiled emitter does not take
// (emitted elementally).
bool IsNestedTranspose(const Instruction& inst) {
  return (inst.opcode() == Opcode::kTranspose ||
          inst.opcode() == Opcode::kCopy) &&
         !IsBitcastTranspose(inst) && !IsTiledTranspose(inst);
}

// The fusion operand behind a fused parameter (for a fusion `owner`), so
// that values inside and outside a fusion can be compared.
const Instruction* RealOperand(const Instruction& owner,
                               const Instruction* operand) {
  if (owner.opcode() == Opcode::kFusion &&
      operand->opcode() == Opcode::kParameter &&
      operand->parent() == owner.fused_computation()) {
    const int64_t n = operand->parameter_number();
    if (n >= 0 && n < owner.operand_count()) return owner.operand(n);
  }
  return operand;
}

std::optional<int64_t> IntegerScalarConstant(const Instruction* inst) {
  if (inst->opcode() != Opcode::kConstant || !inst->has_literal()) {
    return std::nullopt;
  }
  const Shape& s = inst->shape();
  if (!s.IsScalar() || !IsIntegralType(s.element_type())) return std::nullopt;
  return inst->literal().GetAsInt64(0);
}

// Ops that count as non-elementwise for the in-place check. Parameters,
// constants and bitcasts read or produce no shared buffer region.
bool IsRelevantNonElementwise(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kBitcast:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return false;
    default:
      return !IsElementwiseInst(inst);
  }
}

std::vector<const Instruction*> NonElementwiseOps(const Instruction& inst) {
  std::vector<const Instruction*> ops;
  if (const Computation* c = FusedComputation(inst)) {
    for (const Instruction* i : FusedInstructions(*c)) {
      if (IsRelevantNonElementwise(*i)) ops.push_back(i);
    }
  } else if (IsRelevantNonElementwise(inst)) {
    ops.push_back(&inst);
  }
  return ops;
}

// Instructions of `consumer` (its fused computation, or itself) with the
// given opcode.
std::vector<const Instruction*> OpsWithOpcode(const Instruction& inst,
                                              Opcode op) {
  std::vector<const Instruction*> ops;
  if (const Computation* c = FusedComputation(inst)) {
    for (const Instruction* i : FusedInstructions(*c)) {
      if (i->opcode() == op) ops.push_back(i);
    }
  } else if (inst.opcode() == op) {
    ops.push_back(&inst);
  }
  return ops;
}

// A non-elementwise op other than `except` that reads (transitively) the
// fused parameter `param_number` of `fusion`.
bool NonElementwiseReachableFromParameter(const Instruction& fusion,
                                          int64_t param_number,
                                          const Instruction* except) {
  const Computation* c = FusedComputation(fusion);
  if (c == nullptr || param_number < 0 || param_number >= c->num_parameters()) {
    return false;
  }
  std::vector<const Instruction*> stack = {
      c->parameter_instruction(param_number)};
  absl::flat_hash_set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* cur = stack.back();
    stack.pop_back();
    if (!seen.insert(cur).second) continue;
    if (cur != except && IsRelevantNonElementwise(*cur)) return true;
    for (const Instruction* u : cur->users()) stack.push_back(u);
  }
  return false;
}

// The instruction producing output `index` of a fused computation root
// (looking through the root tuple).
const Instruction* FusedOutput(const Computation& c, const ShapeIndex& index) {
  const Instruction* r = c.root_instruction();
  for (int64_t i : index) {
    if (r->opcode() != Opcode::kTuple || i < 0 || i >= r->operand_count()) {
      return nullptr;
    }
    r = r->operand(i);
  }
  return r;
}

// Reduce inputs (the first half of the operands).
int64_t ReduceInputBytes(const Instruction& reduce) {
  const int64_t inputs = reduce.operand_count() / 2;
  int64_t bytes = 0;
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& s = reduce.operand(i)->shape();
    if (s.IsArray()) bytes += ByteWidth(s.element_type());
  }
  return bytes;
}

int64_t WindowElements(const Instruction& inst) {
  int64_t n = 1;
  if (inst.attrs().window) {
    for (const WindowDimension& d : inst.attrs().window->dimensions) {
      n *= d.size;
    }
  }
  return n;
}

// IsExpensiveToRepeat: reductions reading many inputs per output.
bool IsExpensiveToRepeat(const Instruction& inst) {
  if (inst.opcode() == Opcode::kReduce && !IsRealReduction(inst) &&
      inst.operand_count() >= 2) {
    const int64_t out = LeafElements(inst.shape());
    const int64_t in = LeafElements(inst.operand(0)->shape());
    if (out > 0 && in / out > kMaxInputsPerOutput) return true;
  }
  if (inst.opcode() == Opcode::kReduceWindow &&
      WindowElements(inst) > kMaxInputsPerOutput) {
    return true;
  }
  return false;
}

// IfFusedReadsElementsMultipleTimes.
bool ReadsElementsMultipleTimes(const Instruction& inst) {
  if ((inst.opcode() == Opcode::kGather ||
       inst.opcode() == Opcode::kBroadcast) &&
      inst.operand_count() >= 1) {
    return LeafElements(inst.shape()) > LeafElements(inst.operand(0)->shape());
  }
  if (inst.opcode() == Opcode::kReduceWindow && inst.attrs().window) {
    for (const WindowDimension& d : inst.attrs().window->dimensions) {
      if (d.size > d.stride) return true;
    }
  }
  return false;
}

bool InputSlicesCompatible(std::span<const Instruction* const> roots) {
  if (roots.empty()) return false;
  const Shape* operand_shape = nullptr;
  for (const Instruction* r : roots) {
    if (r->opcode() != Opcode::kSlice || r->operand_count() != 1) {
      return false;
    }
    for (const SliceDimension& d : r->attrs().slice) {
      if (d.stride != 1) return false;
    }
    const Shape& s = r->operand(0)->shape();
    if (operand_shape != nullptr &&
        !EqualIgnoringElementType(s, *operand_shape)) {
      return false;
    }
    operand_shape = &s;
  }
  return true;
}

bool HasSubByteType(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (HasSubByteType(e)) return true;
    }
    return false;
  }
  return s.IsArray() && BitWidth(s.element_type()) < 8;
}

bool SameDimensions(const std::optional<ReductionDimensions>& ra,
                    const std::optional<ReductionDimensions>& rb) {
  if (!ra || !rb) return false;
  return ra->is_row_reduction == rb->is_row_reduction &&
         std::equal(ra->dims, ra->dims + 3, rb->dims);
}

bool SameReductionDimensions(const Instruction& a, const Instruction& b) {
  return SameDimensions(GetReductionDimensions(a), GetReductionDimensions(b));
}

// Two tiled transposes that normalise to the same kernel: same input and
// output dimensions and the same permutation.
bool TiledTransposesEquivalent(const Instruction& a, const Instruction& b) {
  return a.operand(0)->shape().SameDimensions(b.operand(0)->shape()) &&
         a.shape().SameDimensions(b.shape()) &&
         PhysicalNonTrivialSizes(a.shape()) ==
             PhysicalNonTrivialSizes(b.shape()) &&
         PhysicalNonTrivialSizes(a.operand(0)->shape()) ==
             PhysicalNonTrivialSizes(b.operand(0)->shape());
}

// The path from a fused parameter to the root only crosses intermediate
// ops (a tiled transpose fed by it stays tiled).
bool PathOfIntermediateOps(const Instruction* param) {
  if (param->user_count() != 1) return false;
  const Instruction* h = param->users()[0];
  while (h->user_count() > 0) {
    if (!IsIntermediate(*h, 1)) return false;
    h = h->users()[0];
  }
  return true;
}

int64_t OperandIndexOf(const Instruction& user, const Instruction* operand) {
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) == operand) return i;
  }
  return -1;
}

FusionDecision HeroesCompatible(const Instruction& a, const Instruction& b,
                                const MultiOutputFacts& fa,
                                const MultiOutputFacts& fb) {
  const Instruction& hero_a = *fa.hero;
  const Instruction& hero_b = *fb.hero;
  const bool reduce_a = fa.reduction;
  const bool reduce_b = fb.reduction;
  const bool transpose_a = fa.tiled_transpose;
  const bool transpose_b = fb.tiled_transpose;
  if (reduce_a && reduce_b &&
      !SameDimensions(fa.reduction_dims, fb.reduction_dims)) {
    return FusionDecision::Forbid("tiled reductions with different shapes");
  }
  if (transpose_a && transpose_b &&
      !TiledTransposesEquivalent(hero_a, hero_b)) {
    return FusionDecision::Forbid("tiled transposes with different shapes");
  }
  if ((transpose_a && reduce_b) || (reduce_a && transpose_b)) {
    return FusionDecision::Forbid("MOF-fusion of a transpose and a reduction");
  }
  if ((fa.nested_transpose && (reduce_b || transpose_b)) ||
      (fb.nested_transpose && (reduce_a || transpose_a))) {
    return FusionDecision::Forbid(
        "MOF-fusion of a nested transpose with an unnested reduction or "
        "tiled transpose");
  }
  if ((transpose_a || transpose_b) && a.opcode() == Opcode::kFusion &&
      b.opcode() == Opcode::kFusion) {
    // A tiled transpose feeding the other fusion must stay tiled once the
    // other fusion reads it inside the same kernel.
    const Instruction* producer = nullptr;
    const Instruction* consumer = nullptr;
    if (transpose_a && b.IsUserOf(&a)) {
      producer = &a;
      consumer = &b;
    } else if (transpose_b && a.IsUserOf(&b)) {
      producer = &b;
      consumer = &a;
    }
    if (consumer != nullptr) {
      const Computation* c = FusedComputation(*consumer);
      const int64_t idx = OperandIndexOf(*consumer, producer);
      if (c != nullptr && idx >= 0 && idx < c->num_parameters() &&
          !PathOfIntermediateOps(c->parameter_instruction(idx))) {
        return FusionDecision::Forbid("tiled transpose would become untiled");
      }
    }
  }
  return FusionDecision::Allow();
}

}  // namespace

bool IsEffectiveScalar(const Shape& s) {
  return s.IsArray() && s.ElementsIn() == 1;
}

bool RootIsDynamicUpdateSlice(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fused_computation() != nullptr &&
         inst.fused_computation()->root_instruction()->opcode() ==
             Opcode::kDynamicUpdateSlice;
}

// ---------------------------------------------------------------------------
// Helpers.

FusionRoots GetFusionRoots(const Computation& fused) {
  FusionRoots roots;
  const Instruction* root = fused.root_instruction();
  if (root == nullptr) return roots;
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* o : root->operands()) roots.push_back(o);
  } else {
    roots.push_back(root);
  }
  return roots;
}

FusionRoots GetKernelRoots(const Instruction& inst) {
  if (const Computation* c = FusedComputation(inst)) return GetFusionRoots(*c);
  return {&inst};
}

bool IsMultiOutputFusion(const Instruction& inst) {
  const Computation* c = FusedComputation(inst);
  return c != nullptr && c->root_instruction()->opcode() == Opcode::kTuple;
}

bool IsIntermediate(const Instruction& inst, int allowed_operand_count) {
  return inst.user_count() <= 1 &&
         IsIntermediateIgnoringUsers(inst, allowed_operand_count);
}

bool IsTiledTranspose(const Instruction& inst) {
  if (inst.opcode() != Opcode::kTranspose && inst.opcode() != Opcode::kCopy) {
    return false;
  }
  if (!TransposesMinorDimension(inst)) return false;
  const Shape& out = inst.shape();
  const Shape& in = inst.operand(0)->shape();
  const int64_t out_minor = MinorMostNonTrivialDimension(out);
  const int64_t in_minor = MinorMostNonTrivialDimension(in);
  if (out_minor < 0 || in_minor < 0) return false;
  const int64_t s = out.dimensions(out_minor);
  const int64_t t = in.dimensions(in_minor);
  return (s >= kMinDimensionToTransposeTiled &&
          t >= kMinDimensionToTransposeTiled) ||
         (s >= kMinDimensionToTransposeTiled2 &&
          t >= kMinDimensionToTransposeTiled2 &&
          s * t >= kMinTotalDimensionsToTransposeTiled);
}

bool IsReductionRaceFree(const ReductionDimensions& dims) {
  if (dims.is_row_reduction) {
    return dims.dims[2] <= kMinThreadsXRowReduction * kRowReductionTileX &&
           dims.dims[0] <= kBatchedReductionRaceFreeBound;
  }
  return dims.dims[1] <= kWarpSize * kColumnReductionTileY;
}

bool IsRealReductionHero(const Instruction& root, const Instruction& hero) {
  if (!IsRealReductionInst(hero)) return false;
  if (&root == &hero) return true;
  std::optional<ReductionDimensions> dims = GetReductionDimensions(hero);
  return dims.has_value() && IsReductionRaceFree(*dims);
}

const Instruction& FindHero(const Instruction& root) {
  if (const Computation* c = FusedComputation(root)) {
    const FusionRoots roots = GetFusionRoots(*c);
    if (roots.empty()) return root;
    for (const Instruction* r : roots) {
      const Instruction* h = WalkToHero(r);
      if (IsRealReductionHero(*r, *h) || IsTiledTranspose(*h)) return *h;
    }
    return *WalkToHero(roots[0]);
  }
  // Outside a fused computation an instruction is its own kernel.
  if (root.parent() == nullptr || !root.parent()->IsFusionComputation()) {
    return root;
  }
  return *WalkToHero(&root);
}

const Instruction& GetRealHeroForMultiOutputFusion(const Instruction& inst) {
  const Computation* c = FusedComputation(inst);
  if (c == nullptr) return inst;
  const Instruction* root = c->root_instruction();
  if (root->opcode() != Opcode::kTuple) {
    const Instruction* h = WalkToHero(root);
    if (IsRealReductionHero(*root, *h) || IsTiledTranspose(*h)) return *h;
    return *root;
  }
  for (const Instruction* r : root->operands()) {
    const Instruction* h = WalkToHero(r);
    if (IsRealReductionHero(*r, *h) || IsTiledTranspose(*h)) return *h;
  }
  return root->operand_count() > 0 ? *root->operand(0) : *root;
}

bool IsNestableVariadicReduction(const Instruction& inst) {
  if (!inst.shape().IsTuple()) return false;
  if (inst.opcode() == Opcode::kReduce) return !IsRealReduction(inst);
  if (inst.opcode() == Opcode::kReduceWindow) return true;
  if (IsLoopFusion(inst)) {
    const Computation* c = FusedComputation(inst);
    return c != nullptr && c->root_instruction()->opcode() == Opcode::kReduce;
  }
  return false;
}

std::vector<std::pair<int64_t, ShapeIndex>> InPlaceInputOutputPairs(
    const Instruction& inst) {
  std::vector<std::pair<int64_t, ShapeIndex>> pairs;
  switch (inst.opcode()) {
    case Opcode::kDynamicUpdateSlice:
      if (inst.operand_count() >= 1) pairs.push_back({0, {}});
      return pairs;
    case Opcode::kScatter: {
      const int64_t n = (inst.operand_count() - 1) / 2;
      if (n == 1 && !inst.shape().IsTuple()) {
        pairs.push_back({0, {}});
      } else {
        for (int64_t i = 0; i < n; ++i) pairs.push_back({i, {i}});
      }
      return pairs;
    }
    case Opcode::kCustomCall:
      for (const OutputOperandAlias& a :
           inst.attrs().output_to_operand_aliasing) {
        if (a.operand >= 0 && a.operand < inst.operand_count()) {
          pairs.push_back({a.operand, a.output_index});
        }
      }
      return pairs;
    case Opcode::kFusion:
      break;
    default:
      return pairs;
  }
  const Computation* c = FusedComputation(inst);
  if (c == nullptr) return pairs;
  const Instruction* root = c->root_instruction();
  auto visit = [&](const Instruction* out, ShapeIndex index) {
    if (out->opcode() != Opcode::kDynamicUpdateSlice &&
        out->opcode() != Opcode::kScatter) {
      return;
    }
    // Follow the in-place operand through bitcasts and chained in-place
    // updates to the fused parameter whose buffer is updated.
    const Instruction* src = out;
    while (src->operand_count() >= 1 &&
           (src->opcode() == Opcode::kDynamicUpdateSlice ||
            src->opcode() == Opcode::kScatter ||
            src->opcode() == Opcode::kBitcast)) {
      src = src->operand(0);
    }
    if (src->opcode() == Opcode::kParameter &&
        src->parameter_number() < inst.operand_count()) {
      pairs.push_back({src->parameter_number(), std::move(index)});
    }
  };
  if (root->opcode() == Opcode::kTuple) {
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      visit(root->operand(i), {i});
    }
  } else {
    visit(root, {});
  }
  return pairs;
}

bool ContainsSignificantReduce(const Instruction& inst) {
  auto significant = [](const Instruction& i) {
    if (i.opcode() != Opcode::kReduce || i.operand_count() < 2) return false;
    const int64_t out = LeafElements(i.shape());
    if (out <= 0) return false;
    return LeafElements(i.operand(0)->shape()) / out >= kSignificantReduceRatio;
  };
  if (const Computation* c = FusedComputation(inst)) {
    for (const Instruction* i : FusedInstructions(*c)) {
      if (significant(*i)) return true;
    }
    return false;
  }
  return significant(inst);
}

// ---------------------------------------------------------------------------
// Classification.

bool IsUniversallyLoopFusible(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCopy && IsElementwiseInst(inst) &&
      inst.operand_count() > 0) {
    return true;
  }
  switch (inst.opcode()) {
    case Opcode::kCopy:
      return !IsTiledTranspose(inst);
    case Opcode::kFusion:
      return inst.fusion_kind() == FusionKind::kLoop;
    case Opcode::kBitcast:
      return inst.operand_count() == 1 && inst.shape().IsArray() &&
             inst.operand(0)->shape().IsArray() &&
             BitWidth(inst.shape().element_type()) ==
                 BitWidth(inst.operand(0)->shape().element_type());
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kPad:
    case Opcode::kReduceWindow:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}

bool IsLoopFusibleAsProducer(const Instruction& inst) {
  if (!BaseFusible(inst)) return false;
  switch (inst.opcode()) {
    case Opcode::kIota:
    case Opcode::kConstant:
      return true;
    case Opcode::kReduce:
      // Only non-variadic reductions fuse as producers.
      return !inst.shape().IsTuple();
    default:
      return IsUniversallyLoopFusible(inst);
  }
}

bool IsLoopFusibleAsConsumer(const Instruction& inst) {
  if (!BaseFusible(inst)) return false;
  // A bitcast consumer would only become a fusion root: indexing cost and
  // no benefit.
  if (inst.opcode() == Opcode::kBitcast) return false;
  if (inst.opcode() == Opcode::kReduce) return true;
  // Input fusions whose hero was lost to earlier fusion are loop fusions.
  if (inst.opcode() == Opcode::kFusion &&
      inst.fusion_kind() == FusionKind::kInput && !IsInputFusible(inst)) {
    return true;
  }
  return IsUniversallyLoopFusible(inst);
}

bool IsInputFusibleReduction(const Instruction& inst) {
  if (const Computation* c = FusedComputation(inst)) {
    for (const Instruction* r : GetFusionRoots(*c)) {
      if (IsRealReductionHero(*r, *WalkToHero(r))) return true;
    }
    return false;
  }
  return IsRealReductionInst(inst);
}

bool IsInputFusibleTranspose(const Instruction& inst) {
  if (inst.opcode() == Opcode::kBitcast || IsCustomFusion(inst)) return false;
  if (inst.opcode() == Opcode::kFusion) {
    const Computation* c = FusedComputation(inst);
    if (c == nullptr) return false;
    for (const Instruction* r : GetFusionRoots(*c)) {
      if (IsTiledTranspose(*WalkToHero(r))) return true;
    }
    return false;
  }
  return IsTiledTranspose(inst);
}

bool IsInputFusibleScatter(const Instruction& inst) {
  if (inst.opcode() == Opcode::kScatter) return true;
  if (inst.opcode() == Opcode::kFusion &&
      inst.fusion_kind() == FusionKind::kInput) {
    const Computation* c = FusedComputation(inst);
    return c != nullptr && c->root_instruction()->opcode() == Opcode::kScatter;
  }
  return false;
}

bool IsInputFusible(const Instruction& inst) {
  return BaseFusible(inst) &&
         (IsInputFusibleReduction(inst) || IsInputFusibleScatter(inst) ||
          IsInputFusibleTranspose(inst));
}

bool IsPhysicallyTransposing(const Instruction& inst) {
  if (const Computation* c = FusedComputation(inst)) {
    for (const Instruction* i : FusedInstructions(*c)) {
      if (IsPhysicallyTransposing(*i)) return true;
    }
  }
  return inst.opcode() == Opcode::kCopy ||
         (inst.opcode() == Opcode::kTranspose && !IsBitcastTranspose(inst));
}

bool IsFusible(const Instruction& inst) {
  if (!BaseFusible(inst)) return false;
  if (IsElementwiseInst(inst)) return true;
  switch (inst.opcode()) {
    case Opcode::kFusion:
      return inst.fusion_kind() != FusionKind::kCustom;
    case Opcode::kBitcast:
      return inst.operand_count() == 1 && inst.shape().IsArray() &&
             inst.operand(0)->shape().IsArray() &&
             BitWidth(inst.shape().element_type()) ==
                 BitWidth(inst.operand(0)->shape().element_type());
    case Opcode::kCopy:
    case Opcode::kIota:
    case Opcode::kConstant:
    case Opcode::kReduce:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kPad:
    case Opcode::kReduceWindow:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kScatter:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}

bool IsExpensive(const Instruction& inst) {
  const Shape& shape = inst.shape();
  const PrimitiveType type =
      shape.IsArray() ? shape.element_type() : PrimitiveType::kInvalid;
  switch (inst.opcode()) {
    // Cheap on GPUs for F32 and F16 (hardware approximations).
    case Opcode::kDivide:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kExp:
      if (type == PrimitiveType::kF32 || type == PrimitiveType::kF16) {
        return false;
      }
      break;
    default:
      break;
  }
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kBroadcast:
    case Opcode::kCeil:
    case Opcode::kClamp:
    case Opcode::kCountLeadingZeros:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kConcatenate:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kFloor:
    case Opcode::kGetTupleElement:
    case Opcode::kImag:
    case Opcode::kInfeed:
    case Opcode::kIota:
    case Opcode::kIsFinite:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kOptimizationBarrier:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kOutfeed:
    case Opcode::kPad:
    case Opcode::kPartitionId:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kReducePrecision:
    case Opcode::kReplicaId:
    case Opcode::kReshape:
    case Opcode::kDynamicReshape:
    case Opcode::kReverse:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kSelect:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSlice:
    case Opcode::kStochasticConvert:
    case Opcode::kSubtract:
    case Opcode::kTranspose:
    case Opcode::kTuple:
      return false;
    // Cheap for real numbers, expensive for complex ones.
    case Opcode::kAbs:
    case Opcode::kCosine:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kTan:
      return IsComplexType(type);
    // Integer division by a constant compiles to multiplies and shifts.
    case Opcode::kDivide:
    case Opcode::kRemainder: {
      if (!IsIntegralType(type) || inst.operand_count() != 2) return true;
      const Instruction* d = inst.operand(1);
      if (d->opcode() == Opcode::kBroadcast && d->operand_count() == 1) {
        d = d->operand(0);
      }
      return !(d->opcode() == Opcode::kConstant &&
               IsEffectiveScalar(d->shape()));
    }
    default:
      return true;
  }
}

FusionKind ChooseFusionKind(const Instruction& producer,
                            const Instruction& consumer) {
  return (IsInputFusible(consumer) || IsInputFusible(producer))
             ? FusionKind::kInput
             : FusionKind::kLoop;
}

FusionKind FusionKindForComputation(const Computation& fused) {
  const FusionRoots roots = GetFusionRoots(fused);
  if (roots.empty()) return FusionKind::kLoop;
  std::vector<const Instruction*> heroes;
  heroes.reserve(roots.size());
  for (const Instruction* r : roots) heroes.push_back(WalkToHero(r));

  // Sub-byte types: only the loop and input-slices emitters handle them.
  bool sub_byte = HasSubByteType(fused.root_instruction()->shape());
  for (const Instruction* p : fused.parameter_instructions()) {
    sub_byte = sub_byte || HasSubByteType(p->shape());
  }
  if (sub_byte) {
    return roots.size() > 1 && InputSlicesCompatible(roots) ? FusionKind::kInput
                                                            : FusionKind::kLoop;
  }

  // Reduction: every other root is a compatible reduction hero or has as
  // many elements as the reduction's input.
  int64_t first_reduce = -1;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (IsRealReductionHero(*roots[i], *heroes[i])) {
      first_reduce = static_cast<int64_t>(i);
      break;
    }
  }
  if (first_reduce >= 0) {
    const Instruction* ref = heroes[first_reduce];
    const int64_t input_elements = LeafElements(ref->operand(0)->shape());
    bool valid = true;
    for (size_t i = 0; i < roots.size() && valid; ++i) {
      if (static_cast<int64_t>(i) == first_reduce) continue;
      if (!IsRealReductionHero(*roots[i], *heroes[i])) {
        valid = LeafElements(roots[i]->shape()) == input_elements;
      } else {
        valid = SameReductionDimensions(*heroes[i], *ref);
      }
    }
    if (valid) return FusionKind::kInput;
  }

  // Transpose: all tiled transpose heroes equivalent, other roots of the
  // transposed size.
  const Instruction* transpose = nullptr;
  for (const Instruction* h : heroes) {
    if (IsTiledTranspose(*h)) {
      transpose = h;
      break;
    }
  }
  if (transpose != nullptr) {
    bool consistent = true;
    for (size_t i = 0; i < roots.size() && consistent; ++i) {
      if (IsTiledTranspose(*heroes[i])) {
        consistent = TiledTransposesEquivalent(*heroes[i], *transpose);
      } else {
        consistent =
            LeafElements(roots[i]->shape()) == LeafElements(transpose->shape());
      }
    }
    if (consistent) return FusionKind::kInput;
  }

  if (roots.size() > 1) {
    return InputSlicesCompatible(roots) ? FusionKind::kInput
                                        : FusionKind::kLoop;
  }
  if (roots[0]->opcode() == Opcode::kScatter) return FusionKind::kInput;
  if (heroes[0]->opcode() == Opcode::kConcatenate &&
      heroes[0]->operand_count() <= 4 &&
      !fused.root_instruction()->shape().IsTuple()) {
    return FusionKind::kInput;
  }
  return FusionKind::kLoop;
}

// ---------------------------------------------------------------------------
// Pairwise legality.

FusionDecision CheckScatterLegality(const Instruction& producer,
                                    const Instruction& consumer) {
  if (IsInputFusibleScatter(producer)) {
    return FusionDecision::Forbid("do not fuse into the output of scatter");
  }
  if (!IsInputFusibleScatter(consumer)) return FusionDecision::Allow();
  const Instruction* in_place = nullptr;
  if (const Computation* c = FusedComputation(consumer)) {
    const Instruction* scatter = c->root_instruction();
    if (scatter->opcode() == Opcode::kScatter &&
        scatter->operand_count() >= 1 &&
        scatter->operand(0)->opcode() == Opcode::kParameter) {
      in_place = RealOperand(consumer, scatter->operand(0));
    }
  } else if (consumer.operand_count() >= 1) {
    in_place = consumer.operand(0);
  }
  if (in_place == nullptr) return FusionDecision::Allow();
  if (in_place == &producer) {
    return FusionDecision::Forbid(
        "do not fuse into the in-place operand of scatter");
  }
  if (std::find(producer.operands().begin(), producer.operands().end(),
                in_place) != producer.operands().end()) {
    return FusionDecision::Forbid(
        "producer uses the in-place operand of a scatter");
  }
  return FusionDecision::Allow();
}

FusionDecision ShouldFuseInPlaceOp(const Instruction& producer,
                                   const Instruction& consumer) {
  for (const auto& [operand_number, output_index] :
       InPlaceInputOutputPairs(consumer)) {
    if (operand_number < 0 || operand_number >= consumer.operand_count()) {
      continue;
    }
    const Instruction* buffer = consumer.operand(operand_number);
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (i != operand_number && consumer.operand(i) == buffer) {
        return FusionDecision::Forbid(
            "the consumer reads its in-place buffer through another operand");
      }
    }
    const bool producer_touches_buffer =
        buffer == &producer ||
        std::find(producer.operands().begin(), producer.operands().end(),
                  buffer) != producer.operands().end();
    if (!producer_touches_buffer) continue;

    const std::vector<const Instruction*> producer_ops =
        NonElementwiseOps(producer);
    if (producer_ops.size() > 1) {
      return FusionDecision::Forbid(
          "producer has several non-elementwise ops on the in-place buffer");
    }
    if (producer_ops.empty()) {
      if (consumer.opcode() != Opcode::kFusion) continue;
      const Computation* c = FusedComputation(consumer);
      const Instruction* in_place_root =
          c == nullptr ? nullptr : FusedOutput(*c, output_index);
      if (NonElementwiseReachableFromParameter(consumer, operand_number,
                                               in_place_root)) {
        return FusionDecision::Forbid(
            "the consumer reads its in-place buffer with a non-elementwise "
            "op");
      }
      continue;
    }

    const std::vector<const Instruction*> dus_ops =
        OpsWithOpcode(consumer, Opcode::kDynamicUpdateSlice);
    if (dus_ops.size() > 1) {
      return FusionDecision::Forbid(
          "consumer has several dynamic-update-slices");
    }
    if (dus_ops.empty()) {
      return FusionDecision::Forbid(
          "unrecognized in-place update with a non-elementwise producer");
    }
    const Instruction* dus = dus_ops[0];
    const Instruction* op = producer_ops[0];
    const Shape& dus_shape = dus->shape();
    if (!dus_shape.IsArray() || dus->operand_count() != 2 + dus_shape.rank()) {
      return FusionDecision::Forbid("malformed dynamic-update-slice");
    }
    if (op->opcode() == Opcode::kSlice) {
      const std::vector<SliceDimension>& slice = op->attrs().slice;
      if (!op->shape().EqualIgnoringLayout(dus->operand(1)->shape()) ||
          static_cast<int64_t>(slice.size()) != dus_shape.rank()) {
        return FusionDecision::Forbid(
            "slice shape differs from the dynamic-update-slice update");
      }
      for (int64_t i = 0; i < dus_shape.rank(); ++i) {
        std::optional<int64_t> start =
            IntegerScalarConstant(RealOperand(consumer, dus->operand(2 + i)));
        if (!start || *start != slice[i].start || slice[i].stride != 1) {
          return FusionDecision::Forbid(
              "slice and dynamic-update-slice indices differ");
        }
      }
    } else if (op->opcode() == Opcode::kDynamicSlice) {
      if (op->operand_count() != 1 + dus_shape.rank()) {
        return FusionDecision::Forbid(
            "dynamic-slice and dynamic-update-slice ranks differ");
      }
      for (int64_t i = 0; i < dus_shape.rank(); ++i) {
        const Instruction* ds_index = RealOperand(producer, op->operand(1 + i));
        const Instruction* dus_index =
            RealOperand(consumer, dus->operand(2 + i));
        std::optional<int64_t> a = IntegerScalarConstant(ds_index);
        std::optional<int64_t> b = IntegerScalarConstant(dus_index);
        if (a != b || (!a && ds_index != dus_index)) {
          return FusionDecision::Forbid(
              "dynamic-slice and dynamic-update-slice indices differ");
        }
      }
    } else {
      return FusionDecision::Forbid(
          "unrecognized in-place update with a non-elementwise producer");
    }
    if (consumer.opcode() == Opcode::kFusion &&
        NonElementwiseReachableFromParameter(consumer, operand_number, dus)) {
      return FusionDecision::Forbid(
          "another non-elementwise op of the consumer reads the in-place "
          "buffer");
    }
  }
  return FusionDecision::Allow();
}

FusionDecision IsProducerConsumerFusible(const Instruction& producer,
                                         const Instruction& consumer) {
  if (!IsLoopFusibleAsProducer(producer) &&
      !IsInputFusibleTranspose(producer)) {
    return FusionDecision::Forbid("the producer is not loop-fusible");
  }
  if (IsInputFusibleReduction(producer)) {
    // Reduction epilogue fusion (enabled by default in XLA).
    const Instruction& hero = FindHero(producer);
    std::optional<ReductionDimensions> dims = GetReductionDimensions(hero);
    if (!dims || !IsReductionRaceFree(*dims)) {
      return FusionDecision::Forbid(
          "reduction epilogue fusion only works for race-free reductions");
    }
    bool all_intermediate = true;
    if (const Computation* c = FusedComputation(consumer)) {
      c->ForEachInstruction([&](const Instruction* i) {
        if (i->opcode() != Opcode::kParameter) {
          all_intermediate = all_intermediate && IsIntermediate(*i, 1);
        }
      });
    } else {
      // Users of an unfused consumer lie outside the new fusion: only its
      // own kind and operand count matter.
      all_intermediate = IsIntermediateIgnoringUsers(consumer, 1);
    }
    if (!all_intermediate) {
      return FusionDecision::Forbid(
          "reduction epilogue must consist of intermediate ops");
    }
    if (producer.user_count() > 1) {
      return FusionDecision::Forbid(
          "reduction epilogue fusion only works for a single user");
    }
  }
  if (FusionDecision d = CheckScatterLegality(producer, consumer); !d) {
    return d;
  }
  if (!IsInputFusible(consumer) && !IsLoopFusibleAsConsumer(consumer)) {
    return FusionDecision::Forbid(
        "the consumer is not input-fusible and not loop-fusible");
  }
  if (IsMultiOutputFusion(producer)) {
    return FusionDecision::Forbid("the producer is a multi-output fusion");
  }
  // Unfused constants stay out of the generated code; only scalars are
  // worth fusing, and only into existing fusions.
  if (producer.opcode() == Opcode::kConstant &&
      (!IsEffectiveScalar(producer.shape()) ||
       consumer.opcode() != Opcode::kFusion)) {
    return FusionDecision::Forbid("not fusing constant");
  }
  return ShouldFuseInPlaceOp(producer, consumer);
}

int64_t SharedMemoryUsage(const Instruction& inst) {
  if (const Computation* c = FusedComputation(inst)) {
    int64_t sum = 0;
    c->ForEachInstruction(
        [&](const Instruction* i) { sum += SharedMemoryUsage(*i); });
    return sum;
  }
  if (IsRealReductionInst(inst)) {
    std::optional<ReductionDimensions> dims = GetReductionDimensions(inst);
    const int64_t bytes = ReduceInputBytes(inst);
    if (dims && dims->is_row_reduction) return kWarpSize * bytes;
    // Column reductions keep a [32][4*32+1] tile per input.
    return kWarpSize * (4 * kWarpSize + 1) * bytes;
  }
  if (IsTiledTranspose(inst) && inst.shape().IsArray()) {
    return kWarpSize * (kWarpSize + 1) * ByteWidth(inst.shape().element_type());
  }
  return 0;
}

int64_t SubshapeCount(const Shape& s) {
  int64_t n = 1;
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) n += SubshapeCount(e);
  }
  return n;
}

int64_t CountUnnestedReductions(const Instruction& inst) {
  if (const Computation* c = FusedComputation(inst)) {
    int64_t sum = 0;
    c->ForEachInstruction(
        [&](const Instruction* i) { sum += CountUnnestedReductions(*i); });
    return sum;
  }
  return IsRealReductionInst(inst) ? 1 : 0;
}

FusionDecision FusionFitsInBudget(const Instruction& a, const Instruction& b,
                                  bool is_consumer_producer_fusion) {
  const int64_t shared = SharedMemoryUsage(a) + SharedMemoryUsage(b);
  if (shared > kSharedMemoryPerBlockBytes) {
    return FusionDecision::Forbid(StrCat("shared memory usage ", shared,
                                         " would be over the budget of ",
                                         kSharedMemoryPerBlockBytes));
  }
  const int64_t reductions =
      CountUnnestedReductions(a) + CountUnnestedReductions(b);
  if (reductions > kMaxUnnestedReductionsPerFusion) {
    return FusionDecision::Forbid(
        StrCat(reductions, " unnested reductions would be over the budget of ",
               kMaxUnnestedReductionsPerFusion));
  }
  const int64_t outputs = SubshapeCount(a.shape()) + SubshapeCount(b.shape());
  // Upper bound (one operand may be the fused edge): often enough to avoid
  // the exact count.
  if (a.operand_count() + b.operand_count() - 1 + outputs <=
      kMaxOperandsAndOutputsPerFusion) {
    return FusionDecision::Allow();
  }
  absl::flat_hash_set<const Instruction*> operands(a.operands().begin(),
                                                   a.operands().end());
  operands.insert(b.operands().begin(), b.operands().end());
  operands.erase(&a);
  operands.erase(&b);
  const int64_t unique = static_cast<int64_t>(operands.size());
  // A producer-consumer fusion keeps the consumer's outputs: no more
  // operands than the consumer has means no growth.
  if (is_consumer_producer_fusion && unique <= a.operand_count()) {
    return FusionDecision::Allow();
  }
  if (unique + outputs > kMaxOperandsAndOutputsPerFusion) {
    return FusionDecision::Forbid(StrCat(
        "number of operands and output buffers ", unique + outputs,
        " is larger than the budget of ", kMaxOperandsAndOutputsPerFusion));
  }
  return FusionDecision::Allow();
}

bool CreatesHeavyComputation(const Instruction& producer,
                             const Instruction& consumer) {
  bool heavy = false;
  if (const Computation* c = FusedComputation(producer)) {
    for (const Instruction* i : FusedInstructions(*c)) {
      heavy = heavy || IsExpensiveToRepeat(*i);
    }
  } else {
    heavy = IsExpensiveToRepeat(producer);
  }
  if (!heavy) return false;
  const Computation* c = FusedComputation(consumer);
  if (c == nullptr) return ReadsElementsMultipleTimes(consumer);
  // Inside a consumer fusion, look at everything reading the producer's
  // parameter (transitively).
  for (int64_t k = 0; k < consumer.operand_count(); ++k) {
    if (consumer.operand(k) != &producer || k >= c->num_parameters()) continue;
    std::vector<const Instruction*> stack = {c->parameter_instruction(k)};
    absl::flat_hash_set<const Instruction*> seen;
    while (!stack.empty()) {
      const Instruction* cur = stack.back();
      stack.pop_back();
      if (!seen.insert(cur).second) continue;
      if (ReadsElementsMultipleTimes(*cur)) return true;
      for (const Instruction* u : cur->users()) stack.push_back(u);
    }
  }
  return false;
}

FusionDecision ProducerConsumerMergedTooLarge(const Instruction& producer,
                                              const Instruction& consumer) {
  auto count = [](const Instruction& inst) -> int64_t {
    const Computation* c = FusedComputation(inst);
    if (c == nullptr) return 1;
    return c->instruction_count() - c->num_parameters();
  };
  const int64_t total = count(producer) + count(consumer);
  if (total > kMaxFusedInstructions) {
    return FusionDecision::Forbid(StrCat("the fusion would have ", total,
                                         " instructions, over the limit of ",
                                         kMaxFusedInstructions));
  }
  return FusionDecision::Allow();
}

// ---------------------------------------------------------------------------
// Multi-output fusion.

bool IsFusibleAsMultiOutputFusionRoot(const Instruction& inst) {
  // Scatter cannot be a multi-output root: its emitter does not support it.
  return BaseFusible(inst) && !IsCustomFusion(inst) &&
         (IsInputFusibleReduction(inst) || IsInputFusibleTranspose(inst) ||
          IsLoopFusion(inst) || IsElementwiseInst(inst));
}

bool IsProducerMultiOutputFusible(const Instruction& producer,
                                  bool allow_multi_output) {
  if (!allow_multi_output && IsMultiOutputFusion(producer)) return false;
  // In-place updates inside multi-output fusions complicate buffer reuse.
  if (!InPlaceInputOutputPairs(producer).empty()) return false;
  if (!IsLoopFusibleAsProducer(producer)) return false;
  return !IsPhysicallyTransposing(producer);
}

MultiOutputFacts GetMultiOutputFacts(const Instruction& inst) {
  MultiOutputFacts f;
  const Instruction& hero = GetRealHeroForMultiOutputFusion(inst);
  f.hero = &hero;
  f.reduction = IsRealReductionInst(hero);
  f.tiled_transpose = IsTiledTranspose(hero);
  f.nested_transpose = IsNestedTranspose(hero);
  if (f.reduction) f.reduction_dims = GetReductionDimensions(hero);
  // The loop shape of a multi-output fusion root: the hero's input for
  // reductions and tiled transposes, else the output.
  f.loop_shape = (f.reduction || f.tiled_transpose) && hero.operand_count() >= 1
                     ? &hero.operand(0)->shape()
                     : &hero.shape();
  return f;
}

FusionDecision ShapesCompatibleForMultiOutputFusion(const Instruction& a,
                                                    const Instruction& b) {
  return ShapesCompatibleForMultiOutputFusion(a, b, GetMultiOutputFacts(a),
                                              GetMultiOutputFacts(b));
}

FusionDecision ShapesCompatibleForMultiOutputFusion(
    const Instruction& a, const Instruction& b, const MultiOutputFacts& fa,
    const MultiOutputFacts& fb) {
  if (FusionDecision d = HeroesCompatible(a, b, fa, fb); !d) return d;
  const Shape& la = *fa.loop_shape;
  const Shape& lb = *fb.loop_shape;
  if (EqualIgnoringElementType(la, lb)) return FusionDecision::Allow();
  if (!la.IsTuple() && !lb.IsTuple() && IsReshapeOrTransposeBitcast(la, lb)) {
    return FusionDecision::Allow();
  }
  return FusionDecision::Forbid("different loop shapes");
}

std::vector<Computation*> GetFusibleComputations(const Module& module) {
  // One walk from the entry finds the live computations (those the entry
  // does not reach are dead: fusing in them would only grow them, round
  // after round, since nothing prunes them) and those some live
  // instruction calls as other than control flow (reducers, comparators,
  // map bodies). Calls from dead computations do not matter: what only
  // they call is dead too.
  absl::flat_hash_set<const Computation*> live;
  absl::flat_hash_set<const Computation*> called_as_function;
  auto as_function = [](const Instruction& caller) {
    const Opcode op = caller.opcode();
    if (op == Opcode::kWhile || op == Opcode::kConditional) return false;
    if (op != Opcode::kCall) return true;
    // Calls annotated with a stream run as separate kernels and are fused
    // into like control flow.
    const FrontendAttributes& attrs = caller.frontend_attributes();
    return std::none_of(attrs.begin(), attrs.end(),
                        [](const FrontendAttribute& a) {
                          return a.key == "_xla_stream_annotation";
                        });
  };
  if (const Computation* entry = module.entry_computation()) {
    std::vector<const Computation*> stack = {entry};
    live.insert(entry);
    while (!stack.empty()) {
      const Computation* c = stack.back();
      stack.pop_back();
      c->ForEachInstruction([&](Instruction* i) {
        if (i->called_computations().empty()) return;
        const bool function = as_function(*i);
        for (const Computation* callee : i->called_computations()) {
          if (live.insert(callee).second) stack.push_back(callee);
          // Fusion bodies are ruled out below anyway.
          if (function && !callee->IsFusionComputation()) {
            called_as_function.insert(callee);
          }
        }
      });
    }
  }
  std::vector<Computation*> result;
  for (Computation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation() || !live.contains(c) ||
        called_as_function.contains(c)) {
      continue;
    }
    result.push_back(c);
  }
  return result;
}

}  // namespace hlogym
