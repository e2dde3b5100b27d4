#include "hlogym/ir/verifier.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/ir/shape_inference.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

absl::Status Verify(std::string_view text, const VerifierOptions& opts = {}) {
  auto m = ParseModule(text);
  if (!m.ok()) {
    ADD_FAILURE() << "test module does not parse: " << m.status().message();
    return m.status();
  }
  return VerifyModule(**m, opts, "test.hlo");
}

// Expects a rejection whose message contains `what`.
void ExpectError(std::string_view text, std::string_view what,
                 const VerifierOptions& opts = {}) {
  absl::Status s = Verify(text, opts);
  ASSERT_FALSE(s.ok()) << "accepted:\n" << text;
  EXPECT_NE(std::string(s.message()).find(what), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << what;
}

void ExpectOk(std::string_view text, const VerifierOptions& opts = {}) {
  absl::Status s = Verify(text, opts);
  EXPECT_TRUE(s.ok()) << s.message();
}

constexpr std::string_view kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

std::string WithAdd(std::string_view entry) {
  return std::string("HloModule m\n") + std::string(kAdd) + std::string(entry);
}

Shape F32(std::initializer_list<int64_t> dims) {
  return Shape(PrimitiveType::kF32, DimVector(dims.begin(), dims.end()));
}

Instruction* AddInst(Computation* c, Opcode op, Shape shape,
                     std::vector<Instruction*> operands, std::string name) {
  auto inst = std::make_unique<Instruction>(op, std::move(shape));
  for (Instruction* o : operands) inst->AppendOperand(o);
  inst->set_name(std::move(name));
  return c->AddInstruction(std::move(inst));
}

Instruction* AddParam(Computation* c, int64_t n, Shape shape,
                      std::string name) {
  auto inst =
      std::make_unique<Instruction>(Opcode::kParameter, std::move(shape));
  inst->set_int_attr(n);
  inst->set_name(std::move(name));
  return c->AddInstruction(std::move(inst));
}

// ---------------------------------------------------------------------------
// Messages.

TEST(VerifierTest, MessageNamesLocationInstructionAndRule) {
  absl::Status s = Verify(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT add.5 = f32[2] add(a, b)
})");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "test.hlo:5:3: instruction 'add.5': binary op operands must have "
            "the same dimensions, got f32[2] and f32[3]");
}

TEST(VerifierTest, NoLocationPrefixWithoutFileName) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT n = s32[2] negate(a)
})");
  ASSERT_TRUE(m.ok());
  absl::Status s = VerifyModule(**m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(std::string(s.message()).rfind("instruction 'n': ", 0), 0u)
      << s.message();
}

TEST(VerifierTest, AcceptsSimpleModule) {
  ExpectOk(WithAdd(R"(
ENTRY e {
  p = f32[8,4] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
  ROOT n = f32[8] negate(r)
})"));
}

// ---------------------------------------------------------------------------
// Structure (built with the IR API).

TEST(VerifierStructureTest, MissingEntry) {
  Module m("m");
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("no entry computation"),
            std::string::npos);
}

TEST(VerifierStructureTest, MissingRoot) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  AddParam(c.get(), 0, F32({2}), "p");
  m.AddComputation(std::move(c), true);
  m.entry_computation()->set_root_instruction(nullptr);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("has no ROOT"), std::string::npos);
}

TEST(VerifierStructureTest, ParameterNumberGap) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  Instruction* p0 = AddParam(c.get(), 0, F32({2}), "p0");
  AddParam(c.get(), 2, F32({2}), "p2");
  c->set_root_instruction(p0);
  m.AddComputation(std::move(c), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("parameter number 2 is out of range"),
            std::string::npos)
      << s.message();
}

TEST(VerifierStructureTest, DuplicateParameterNumber) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  Instruction* p0 = AddParam(c.get(), 0, F32({2}), "p0");
  AddParam(c.get(), 0, F32({2}), "p1");
  c->set_root_instruction(p0);
  m.AddComputation(std::move(c), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("parameter number 0 is used twice"),
            std::string::npos)
      << s.message();
}

TEST(VerifierStructureTest, DuplicateInstructionName) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  Instruction* p = AddParam(c.get(), 0, F32({2}), "x");
  Instruction* n = AddInst(c.get(), Opcode::kNegate, F32({2}), {p}, "x");
  c->set_root_instruction(n);
  m.AddComputation(std::move(c), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("name is not unique"),
            std::string::npos);
}

TEST(VerifierStructureTest, DuplicateComputationName) {
  Module m("m");
  auto a = std::make_unique<Computation>("c");
  a->set_root_instruction(AddParam(a.get(), 0, F32({}), "p"));
  m.AddComputation(std::move(a), false);
  auto b = std::make_unique<Computation>("c");
  b->set_root_instruction(AddParam(b.get(), 0, F32({}), "p"));
  m.AddComputation(std::move(b), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("computation name is not unique"),
            std::string::npos);
}

TEST(VerifierStructureTest, OperandFromAnotherComputation) {
  Module m("m");
  auto other = std::make_unique<Computation>("other");
  Instruction* q = AddParam(other.get(), 0, F32({2}), "q");
  other->set_root_instruction(q);
  m.AddComputation(std::move(other), false);
  auto c = std::make_unique<Computation>("e");
  AddParam(c.get(), 0, F32({2}), "p");
  Instruction* n = AddInst(c.get(), Opcode::kNegate, F32({2}), {q}, "n");
  c->set_root_instruction(n);
  m.AddComputation(std::move(c), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("is in a different computation"),
            std::string::npos);
}

TEST(VerifierStructureTest, CycleThroughControlEdge) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  Instruction* p = AddParam(c.get(), 0, F32({2}), "p");
  Instruction* a = AddInst(c.get(), Opcode::kNegate, F32({2}), {p}, "a");
  Instruction* b = AddInst(c.get(), Opcode::kNegate, F32({2}), {a}, "b");
  ASSERT_TRUE(b->AddControlDependencyTo(a).ok());
  c->set_root_instruction(b);
  m.AddComputation(std::move(c), true);
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("part of a cycle"),
            std::string::npos);
}

TEST(VerifierStructureTest, RecursiveCall) {
  Module m("m");
  auto c = std::make_unique<Computation>("e");
  Instruction* p = AddParam(c.get(), 0, F32({2}), "p");
  Instruction* call = AddInst(c.get(), Opcode::kCall, F32({2}), {p}, "call");
  c->set_root_instruction(call);
  Computation* e = m.AddComputation(std::move(c), true);
  call->set_called_computations({e});
  absl::Status s = VerifyModule(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("recursively"), std::string::npos);
}

TEST(VerifierStructureTest, EntryComputationLayoutParameterCount) {
  ExpectError(R"(HloModule m, entry_computation_layout={(f32[2])->f32[2]}
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] add(a, b)
})",
              "Number of parameters in entry computation layout");
}

TEST(VerifierStructureTest, EntryComputationLayoutResult) {
  ExpectError(R"(HloModule m, entry_computation_layout={(f32[2])->f32[3]}
ENTRY e {
  ROOT a = f32[2] parameter(0)
})",
              "should be compatible to one specified");
}

TEST(VerifierStructureTest, InputOutputAliasParameterOutOfRange) {
  ExpectError(R"(HloModule m, input_output_alias={ {}: (3, {}, may-alias) }
ENTRY e {
  ROOT a = f32[2] parameter(0)
})",
              "input_output_alias parameter 3 is out of range");
}

// ---------------------------------------------------------------------------
// Elementwise operations.

TEST(VerifierElementwiseTest, BinaryElementTypes) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT s = f32[2] add(a, b)
})",
              "binary op operands must have the same element type");
}

TEST(VerifierElementwiseTest, MixedPrecisionOption) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT s = f32[2] add(a, b)
})";
  ExpectOk(text);
  VerifierOptions strict;
  strict.allow_mixed_precision = false;
  ExpectError(text, "floating point types of different precisions", strict);
}

TEST(VerifierElementwiseTest, CompareProducesPred) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT c = f32[2] compare(a, a), direction=LT
})",
              "expected shape pred[2], actual shape is f32[2]");
}

TEST(VerifierElementwiseTest, CompareTypeMustMatchOperands) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = s32[] parameter(0)
  ROOT c = pred[] compare(a, a), direction=LT, type=UNSIGNED
})",
              "Expected comparison type SIGNED");
}

TEST(VerifierElementwiseTest, LogicalOpsNeedPredOrIntegers) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT x = f32[2] and(a, a)
})",
              "and expects pred or integer elements");
}

TEST(VerifierElementwiseTest, ShiftsNeedIntegers) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT x = f32[2] shift-left(a, a)
})",
              "shift-left expects integer elements");
}

TEST(VerifierElementwiseTest, ComplexAndReal) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c = c64[2] complex(a, a)
  ROOT r = f32[2] real(c)
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f16[2] parameter(0)
  ROOT c = c64[2] complex(a, a)
})",
              "complex expects two f32 or two f64 elements");
}

TEST(VerifierElementwiseTest, UnaryElementTypeRules) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = s32[2] parameter(0)
  ROOT x = s32[2] exponential(a)
})",
              "exponential expects floating-point or complex elements");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT x = f32[2] is-finite(a)
})",
              "expected shape pred[2]");
}

TEST(VerifierElementwiseTest, SelectNeedsPredAndTupleIsRejected) {
  ExpectError(R"(HloModule m
ENTRY e {
  p = s32[2] parameter(0)
  a = f32[2] parameter(1)
  ROOT s = f32[2] select(p, a, a)
})",
              "select's predicate must have pred elements");
  ExpectError(R"(HloModule m
ENTRY e {
  p = pred[] parameter(0)
  a = (f32[], f32[]) parameter(1)
  ROOT s = (f32[], f32[]) select(p, a, a)
})",
              "expected an array for select's on-true operand");
}

TEST(VerifierElementwiseTest, ClampAllowsScalarBounds) {
  ExpectOk(R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT c = f32[4] clamp(lo, x, lo)
})");
}

TEST(VerifierElementwiseTest, ResultAccuracyOnlyOnTranscendentals) {
  // The parser already refuses the attribute on negate; set it directly.
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
})");
  ASSERT_TRUE(m.ok());
  (*m)->entry_computation()
      ->root_instruction()
      ->mutable_attrs()
      ->result_accuracy_text = "{mode=highest}";
  absl::Status s = VerifyModule(**m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message())
                .find("result accuracy is not supported for negate"),
            std::string::npos)
      << s.message();
}

TEST(VerifierElementwiseTest, ConvertAndBitcastConvert) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  c = s8[2] convert(a)
  ROOT b = u8[2,4] bitcast-convert(a)
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT b = f64[] bitcast-convert(a)
})",
              "needs a last dimension of size 2");
}

// ---------------------------------------------------------------------------
// Data movement.

TEST(VerifierShapeTest, BroadcastDimensions) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(a), dimensions={1}
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(a), dimensions={0}
})",
              "broadcast maps operand dimension 0");
}

TEST(VerifierShapeTest, ReshapeKeepsElementCount) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[5] reshape(a)
})",
              "reshape must keep the element count");
}

TEST(VerifierShapeTest, TransposePermutation) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[3,2] transpose(a), dimensions={0,0}
})",
              "are not a permutation");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT t = f32[2,3] transpose(a), dimensions={1,0}
})",
              "expected shape f32[3,2]");
}

TEST(VerifierShapeTest, ReverseDimensionsUnique) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(a), dimensions={1,1}
})",
              "repeat a dimension");
}

TEST(VerifierShapeTest, SliceLimits) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[10] parameter(0)
  ROOT s = f32[3] slice(a), slice={[1:8:3]}
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[10] parameter(0)
  ROOT s = f32[4] slice(a), slice={[0:12]}
})",
              "slice limit 12 in dimension 0 exceeds");
}

TEST(VerifierShapeTest, DynamicSliceAndUpdate) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[10,4] parameter(0)
  i = s32[] parameter(1)
  d = f32[2,4] dynamic-slice(a, i, i), dynamic_slice_sizes={2,4}
  ROOT u = f32[10,4] dynamic-update-slice(a, d, i, i)
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[10,4] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[2,4] dynamic-slice(a, i), dynamic_slice_sizes={2,4}
})",
              "has 1 start indices but the operand f32[10,4] has rank 2");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[10] parameter(0)
  u = f32[20] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[10] dynamic-update-slice(a, u, i)
})",
              "is larger than the operand");
}

TEST(VerifierShapeTest, Concatenate) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,3] parameter(1)
  ROOT c = f32[2,6] concatenate(a, b), dimensions={1}
})",
              "concatenate operands may only differ in dimension 1");
}

TEST(VerifierShapeTest, Pad) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT p = f32[9] pad(a, z), padding=1_1_1
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  z = f32[2] parameter(1)
  ROOT p = f32[4] pad(a, z), padding=0_0
})",
              "padding value must be a scalar");
}

TEST(VerifierShapeTest, Iota) {
  ExpectError(R"(HloModule m
ENTRY e {
  ROOT i = s32[4,3] iota(), iota_dimension=2
})",
              "iota dimension 2");
  ExpectError(R"(HloModule m
ENTRY e {
  ROOT i = pred[4] iota(), iota_dimension=0
})",
              "got PRED");
}

TEST(VerifierShapeTest, GatherAndScatter) {
  ExpectOk(WithAdd(R"(
ENTRY e {
  op = f32[5,4] parameter(0)
  idx = s32[3] parameter(1)
  g = f32[3,4] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  ROOT s = f32[5,4] scatter(op, idx, g), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
      index_vector_dim=1, to_apply=add
})"));
  ExpectError(R"(HloModule m
ENTRY e {
  op = f32[5,4] parameter(0)
  idx = s32[3] parameter(1)
  ROOT g = f32[3,4] gather(op, idx), offset_dims={1},
      collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
      slice_sizes={2,4}
})",
              "can only collapse dimensions of slice size 0 or 1");
  ExpectError(WithAdd(R"(
ENTRY e {
  op = f32[5,4] parameter(0)
  idx = s32[3] parameter(1)
  up = f32[3,4] parameter(2)
  ROOT s = f32[5,4] scatter(op, idx, up), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={7},
      index_vector_dim=1, to_apply=add
})"),
              "Invalid scatter_dims_to_operand_dims mapping");
}

// ---------------------------------------------------------------------------
// Reductions, sorting and contractions.

TEST(VerifierReduceTest, ReducerSignature) {
  ExpectError(R"(HloModule m
bad {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=bad
})",
              "reduction computation must take 2 parameters, but takes 1");
}

TEST(VerifierReduceTest, VariadicReduce) {
  ExpectOk(R"(HloModule m
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  g = pred[] compare(a, b), direction=GE
  v = f32[] select(g, a, b)
  k = s32[] select(g, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
ENTRY e {
  p = f32[8,3] parameter(0)
  q = s32[8,3] parameter(1)
  z = f32[] constant(0)
  y = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(p, q, z, y), dimensions={0}, to_apply=argmax
})");
}

TEST(VerifierReduceTest, ReduceWindowAndSelectAndScatter) {
  ExpectOk(WithAdd(R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  p = f32[8,8] parameter(0)
  z = f32[] constant(0)
  w = f32[4,4] reduce-window(p, z), window={size=2x2 stride=2x2}, to_apply=add
  ROOT s = f32[8,8] select-and-scatter(p, w, z), window={size=2x2 stride=2x2},
      select=ge, scatter=add
})"));
  ExpectError(WithAdd(R"(
ENTRY e {
  p = f32[8,8] parameter(0)
  z = f32[] constant(0)
  ROOT w = f32[4,4] reduce-window(p, z), window={size=2x2 stride=1x1}, to_apply=add
})"),
              "expected shape f32[7,7]");
}

TEST(VerifierReduceTest, SortComparator) {
  ExpectError(R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  p = f32[8] parameter(0)
  ROOT s = f32[8] sort(p), dimensions={0}, to_apply=cmp
})",
              "sort's comparator must return pred[]");
}

TEST(VerifierReduceTest, MapToApply) {
  ExpectError(R"(HloModule m
f {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT m = f32[4] map(a, b), dimensions={0}, to_apply=f
})",
              "map computation takes 1 parameters but map has 2 operands");
}

TEST(VerifierDotTest, ContractingDimensions) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[4,2,3] parameter(0)
  b = f32[4,3,5] parameter(1)
  ROOT d = f32[4,2,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},
      lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
              "dot contracting dimension sizes do not match");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={3}, rhs_contracting_dims={0}
})",
              "out of range");
}

TEST(VerifierDotTest, RaggedDot) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  c = u32[3] parameter(2)
  ROOT d = f32[11,7] ragged-dot(a, b, c), lhs_contracting_dims={1},
      rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})");
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[11,5] parameter(0)
  b = f32[5,7] parameter(1)
  c = u32[3] parameter(2)
  ROOT d = f32[3,11,7] ragged-dot(a, b, c), lhs_contracting_dims={1},
      rhs_contracting_dims={0}, lhs_ragged_dims={1}
})");
}

TEST(VerifierDotTest, Convolution) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f16[8,16,28,28] parameter(0)
  k = f16[3,3,16,32] parameter(1)
  ROOT c = f16[8,32,14,14] convolution(a, k), window={size=3x3 stride=2x2 pad=1_1x1_1},
      dim_labels=bf01_01io->bf01
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f16[8,16,28,28] parameter(0)
  k = f16[3,3,8,32] parameter(1)
  ROOT c = f16[8,32,26,26] convolution(a, k), window={size=3x3},
      dim_labels=bf01_01io->bf01
})",
              "must equal the kernel input feature size 8");
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f16[8,16,28,28] parameter(0)
  k = f16[3,3,8,32] parameter(1)
  ROOT c = f16[8,32,26,26] convolution(a, k), window={size=3x3},
      dim_labels=bf01_01io->bf01, feature_group_count=2
})");
}

TEST(VerifierLinalgTest, TriangularSolveCholeskyFftTopK) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  t = f32[4,3] triangular-solve(a, b), left_side=true, lower=true
  c = f32[4,4] cholesky(a), lower=true
  x = c64[8] parameter(2)
  f = c64[8] fft(x), fft_type=FFT, fft_length={8}
  ROOT k = (f32[4,2], s32[4,2]) topk(a), k=2
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  ROOT c = f32[4,3] cholesky(a)
})",
              "must be square");
}

TEST(VerifierLinalgTest, BatchNorm) {
  ExpectError(R"(HloModule m
ENTRY e {
  x = f32[8,4] parameter(0)
  s = f32[5] parameter(1)
  ROOT t = (f32[8,4], f32[4], f32[4]) batch-norm-training(x, s, s),
      epsilon=0.001, feature_index=1
})",
              "must have 4 elements");
}

// ---------------------------------------------------------------------------
// Control flow and calls.

TEST(VerifierControlFlowTest, WhileConditionMustReturnPred) {
  ExpectError(R"(HloModule m
cond {
  p = s32[] parameter(0)
  ROOT c = s32[] constant(1)
}
body {
  p = s32[] parameter(0)
  ROOT n = s32[] negate(p)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = s32[] while(i), condition=cond, body=body
})",
              "must return pred[]");
}

TEST(VerifierControlFlowTest, WhileOperandMatchesBodyParameter) {
  ExpectError(R"(HloModule m
cond {
  p = f32[] parameter(0)
  ROOT c = pred[] constant(true)
}
body {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
ENTRY e {
  i = s32[] parameter(0)
  ROOT w = f32[] while(i), condition=cond, body=body
})",
              "shape does not match parameter of body");
}

TEST(VerifierControlFlowTest, ConditionalBranches) {
  ExpectError(R"(HloModule m
b0 {
  p = f32[4] parameter(0)
  ROOT c = f32[4] ceil(p)
}
b1 {
  p = f32[4] parameter(0)
  ROOT c = f32[2] slice(p), slice={[0:2]}
}
ENTRY e {
  x = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT c = f32[4] conditional(i, x, x), branch_computations={b0, b1}
})",
              "branch 1 returns f32[2] but branch 0 returns f32[4]");
  ExpectError(R"(HloModule m
b0 {
  p = f32[4] parameter(0)
  ROOT c = f32[4] ceil(p)
}
ENTRY e {
  x = f32[4] parameter(0)
  i = f32[] parameter(1)
  ROOT c = f32[4] conditional(i, x), branch_computations={b0}
})",
              "first operand of indexed conditional must be a scalar of S32");
}

TEST(VerifierControlFlowTest, CallSignature) {
  ExpectError(R"(HloModule m
callee {
  ROOT p = (s32[], f32[4]) parameter(0)
}
ENTRY e {
  p0 = (f32[4], s32[]) parameter(0)
  ROOT c = (s32[], f32[4]) call(p0), to_apply=callee
})",
              "does not match parameter");
}

TEST(VerifierControlFlowTest, CalleeThreadMustMatch) {
  ExpectError(R"(HloModule m
callee {
  ROOT p = f32[] parameter(0)
}, execution_thread="other"
ENTRY e {
  p0 = f32[] parameter(0)
  ROOT c = f32[] call(p0), to_apply=callee
})",
              "expects parent computation thread name same as called");
}

TEST(VerifierControlFlowTest, CompositeCallNeedsName) {
  ExpectError(WithAdd(R"(
ENTRY e {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a, a), is_composite=true, to_apply=add
})"),
              "composite.name");
  ExpectOk(WithAdd(R"(
ENTRY e {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a, a), is_composite=true, to_apply=add,
      frontend_attributes={composite.name="my.add",composite.version="1"}
})"));
}

TEST(VerifierControlFlowTest, FusionParameters) {
  ExpectError(
      R"(HloModule m
fused {
  a = f32[10] parameter(0)
  b = f32[10] parameter(1)
  ROOT s = f32[10] add(a, b)
}
ENTRY e {
  p = f32[10] parameter(0)
  ROOT f = f32[10] fusion(p), kind=kLoop, calls=fused
})",
      "fused parameter count (2) does not match the number of operands");
}

TEST(VerifierControlFlowTest, CustomCallIsLenientButChecksAliasing) {
  ExpectOk(R"(HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  ROOT c = (s32[3], f32[]) custom-call(p), custom_call_target="anything"
})");
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  ROOT c = f32[5] custom-call(p), custom_call_target="foo",
      output_to_operand_aliasing={{}: (0, {})}
})",
              "different aliasing shapes");
}

// ---------------------------------------------------------------------------
// Collectives.

TEST(VerifierCollectiveTest, ReplicaGroups) {
  ExpectError(WithAdd(R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(p), replica_groups={{0,1},{1,2}}, to_apply=add
})"),
              "Replica 1 is repeated");
  ExpectError(WithAdd(R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(p), replica_groups={}, channel_id=1,
      use_global_device_ids=true, to_apply=add
})"),
              "Replica groups must be specified in flattened-id mode");
}

TEST(VerifierCollectiveTest, AllGatherAndReduceScatter) {
  ExpectOk(WithAdd(R"(
ENTRY e {
  p = f32[4,8] parameter(0)
  g = f32[8,8] all-gather(p), replica_groups={{0,1}}, dimensions={0}
  ROOT r = f32[4,8] reduce-scatter(g), replica_groups={{0,1}},
      dimensions={0}, to_apply=add
})"));
  ExpectError(WithAdd(R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] reduce-scatter(p), replica_groups={{0,1}},
      dimensions={0}, to_apply=add
})"),
              "shard_count = 1, subgroup_size = 2");
}

TEST(VerifierCollectiveTest, AllToAllOperandsShareShape) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[4,2] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT t = (f32[4,2], f32[4,3]) all-to-all(a, b), replica_groups={{0,1}}
})",
              "HLO all-to-all has operands with different shapes");
}

TEST(VerifierCollectiveTest, CollectivePermutePairs) {
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT c = f32[8] collective-permute(p), source_target_pairs={{0,1},{0,2}}
})",
              "Source 0 appears more than once");
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT c = f32[8] collective-permute(p), source_target_pairs={{0,2},{1,2}}
})",
              "Target 2 appears more than once");
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT c = f32[8] collective-permute(p), source_target_pairs={{-1,2}}
})",
              "must be >= 0");
}

TEST(VerifierCollectiveTest, StartDonePairs) {
  ExpectError(WithAdd(R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  s = f32[2,3] all-reduce-start(p), to_apply=add
  d1 = f32[2,3] all-reduce-done(s)
  ROOT d2 = f32[2,3] all-reduce-done(s)
})"),
              "requires one consumer, found 2");
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  u = u32[] parameter(1)
  t = (f32[2,3], f32[2,3], u32[]) tuple(p, p, u)
  ROOT d = f32[2,3] copy-done(t)
})",
              "needs to be copy-start, found tuple");
}

// ---------------------------------------------------------------------------
// Async operations.

TEST(VerifierAsyncTest, StartUpdateDone) {
  ExpectOk(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  s = ((f32[2,3]), f32[2,3], u32[]) custom-call-start(p), custom_call_target="foo"
  u = ((f32[2,3]), f32[2,3], u32[]) custom-call-update(s)
  ROOT d = f32[2,3] custom-call-done(u)
})");
  ExpectError(
      R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  s = ((f32[2,3]), f32[3,2], u32[]) custom-call-start(p), custom_call_target="foo"
  ROOT d = f32[2,3] custom-call-done(s)
})",
      "expects the shape of output to match the async shape at index {1}");
}

TEST(VerifierAsyncTest, ComputationParameters) {
  ExpectError(R"(HloModule m
comp {
  a = f32[2,3] parameter(0)
  ROOT b = f32[3,2] parameter(1)
}
ENTRY e {
  p0 = f32[2,3] parameter(0)
  p1 = f32[3,2] parameter(1)
  s = ((f32[3,2], f32[3,2]), f32[3,2], u32[]) async-start(p0, p1), calls=comp
  ROOT d = f32[3,2] async-done(s)
})",
              "async shape at index {0} to match async computation parameter");
}

TEST(VerifierAsyncTest, StartNeedsConsumer) {
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  ROOT s = ((f32[2,3]), f32[2,3], u32[]) custom-call-start(p), custom_call_target="foo"
})",
              "async-start instruction requires one consumer, found 0");
}

TEST(VerifierAsyncTest, CopyStartShape) {
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  s = f32[2,3] copy-start(p)
  ROOT d = f32[2,3] copy-done(s)
})",
              "expected shape (f32[2,3], f32[2,3], u32[])");
}

// ---------------------------------------------------------------------------
// Tokens, send/recv, rng, misc.

TEST(VerifierMiscTest, TokensAndFeeds) {
  ExpectOk(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  i = (f32[2], token[]) infeed(t)
  d = f32[2] get-tuple-element(i), index=0
  o = token[] outfeed(d, t)
  ROOT a = f32[2] add-dependency(d, o)
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT d = f32[2] add-dependency(a, a)
})",
              "Expected operand 1 to be token-shaped");
}

TEST(VerifierMiscTest, Rng) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = s32[] constant(0)
  b = s32[] constant(1)
  ROOT r = s32[10] rng(a, b), distribution=rng_normal
})",
              "Element type not supported for rng_normal");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[] constant(0)
  b = f16[2] parameter(0)
  ROOT r = f32[10] rng(a, b), distribution=rng_uniform
})",
              "Expected scalar types");
}

TEST(VerifierMiscTest, ReducePrecisionAndGetDimensionSize) {
  ExpectError(R"(HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  ROOT r = s32[4] reduce-precision(a), exponent_bits=5, mantissa_bits=2
})",
              "reduce-precision needs a floating-point operand");
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  s = s32[] get-dimension-size(a), dimensions={0}
  ROOT d = f32[<=4] set-dimension-size(a, s), dimensions={0}
})");
}

TEST(VerifierMiscTest, BitcastIsLenientUnlessLayoutSensitive) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT b = f32[3] bitcast(a)
})";
  ExpectOk(text);
  VerifierOptions layout;
  layout.layout_sensitive = true;
  ExpectError(text, "Bitcast cannot have different shape sizes", layout);
}

TEST(VerifierMiscTest, ElementSizeOnlyForSubByteTypes) {
  ExpectError(R"(HloModule m
ENTRY e {
  ROOT p = u8[2,5]{1,0:E(8)} parameter(0)
})",
              "only sub-byte types may have");
  ExpectOk(R"(HloModule m
ENTRY e {
  ROOT p = s4[2,5]{1,0:E(4)} parameter(0)
})");
}

TEST(VerifierMiscTest, Alternatives) {
  ExpectOk(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] negate(a)
  ROOT x = f32[4] alternatives(a, b)
})");
  ExpectError(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[2] parameter(1)
  ROOT x = f32[4] alternatives(a, b)
})",
              "alternatives operand 1 has shape f32[2]");
}

TEST(VerifierMiscTest, ShardingRank) {
  ExpectError(R"(HloModule m
ENTRY e {
  ROOT p = f32[4,2] parameter(0), sharding={devices=[1,2,2,1]0,1,2,3}
})",
              "different than the input rank");
}

TEST(VerifierMiscTest, BuffersMustBeAliased) {
  ExpectOk(R"(HloModule m
ENTRY e {
  p = f32[32] parameter(0)
  b = b(f32[32]) custom-call(p), custom_call_target="Pin",
      output_to_operand_aliasing={{}: (0, {})}
  ROOT v = f32[32] custom-call(b), custom_call_target="Unpin",
      output_to_operand_aliasing={{}: (0, {})}
})");
  ExpectError(R"(HloModule m
ENTRY e {
  p = f32[32] parameter(0)
  b = b(f32[32]) custom-call(p), custom_call_target="Pin"
  ROOT v = f32[32] custom-call(b), custom_call_target="Unpin",
      output_to_operand_aliasing={{}: (0, {})}
})",
              "buffer result at {} must alias an operand");
}

// ---------------------------------------------------------------------------
// Shape inference used directly (as instruction builders will).

TEST(ShapeInferenceTest, BinaryAndDot) {
  auto add = InferBinaryOpShape(Opcode::kAdd, F32({2, 3}), F32({2, 3}));
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(ShapeText(*add), "f32[2,3]");
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  auto dot = InferDotShape(F32({2, 3}), F32({3, 5}), d, std::nullopt);
  ASSERT_TRUE(dot.ok());
  EXPECT_EQ(ShapeText(*dot), "f32[2,5]");
}

// A result with another element type drops a sub-byte element size, and a
// layout without a tail does not get one (shapes stay without it, shared).
TEST(ShapeInferenceTest, ChangedElementTypeKeepsLayoutTailsSmall) {
  Shape s4(PrimitiveType::kS4, {8});
  s4.mutable_layout()->mutable_tail().element_size_in_bits = 4;
  auto cmp = InferBinaryOpShape(Opcode::kCompare, s4, s4);
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(ShapeText(*cmp), "pred[8]");
  EXPECT_FALSE(cmp->layout().HasTail());
  EXPECT_EQ(s4.layout().tail().element_size_in_bits, 4);  // operand intact
  auto plain = InferBinaryOpShape(Opcode::kCompare, F32({2, 3}), F32({2, 3}));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(&plain->layout().tail(), &F32({1}).layout().tail());
}

TEST(ShapeInferenceTest, HigherPrecisionElementType) {
  EXPECT_EQ(
      HigherPrecisionElementType(PrimitiveType::kBF16, PrimitiveType::kF32),
      PrimitiveType::kF32);
  EXPECT_EQ(
      HigherPrecisionElementType(PrimitiveType::kF16, PrimitiveType::kBF16),
      PrimitiveType::kBF16);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Layout-sensitive mode: element-moving operations keep their operands'
// layout; default mode ignores layouts.
TEST(VerifierLayoutTest, LayoutChangesOnlyRejectedWhenLayoutSensitive) {
  constexpr std::string_view kSlice = R"(
HloModule m
ENTRY e {
  p = f32[4,5]{0,1} parameter(0)
  ROOT s = f32[3,4]{1,0} slice(p), slice={[0:3], [0:4]}
}
)";
  VerifierOptions sensitive;
  sensitive.layout_sensitive = true;
  ExpectOk(kSlice);
  ExpectError(kSlice,
              "instruction 's': slice must not change the layout: operand 'p' "
              "is f32[4,5]{0,1}, result is f32[3,4]{1,0}",
              sensitive);
  constexpr std::string_view kAddLayouts = R"(
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[2,3]{0,1} parameter(1)
  ROOT r = f32[2,3]{1,0} add(a, b)
}
)";
  ExpectOk(kAddLayouts);
  ExpectError(kAddLayouts, "add must not change the layout: operand 'b'",
              sensitive);
  // Transpose and copy are how layouts change: allowed in both modes.
  constexpr std::string_view kCopy = R"(
HloModule m
ENTRY e {
  p = f32[4,5]{0,1} parameter(0)
  ROOT c = f32[4,5]{1,0} copy(p)
}
)";
  ExpectOk(kCopy);
  ExpectOk(kCopy, sensitive);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Found by the fuzzer: mesh axis sizes whose product overflows int64 (UB,
// caught by check-full's UBSan). The size saturates and the mismatch with
// the device list is reported.
TEST(VerifierFuzzRegressionTest, HugeMeshDoesNotOverflow) {
  std::string text = std::string(kAdd) + R"(
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(p), replica_groups=mesh['a'=99999999,'b'=99999999,'c'=99999999, device_ids=(0,1)] {'a'}, to_apply=add
}
)";
  ExpectError(text, "mesh device_ids list 2 devices but the mesh has");
}

}  // namespace
}  // namespace hlogym
