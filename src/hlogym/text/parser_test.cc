#include "hlogym/text/parser.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/ir/module.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

using T = PrimitiveType;
using Groups = std::vector<std::vector<int64_t>>;
using Ints = std::vector<int64_t>;

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n--- text ---\n" << text;
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

// The error message, or "<parsed>" if the text was accepted.
std::string ParseError(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  if (m.ok()) return "<parsed>";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(m.status().message());
}

// Asserts that parsing fails at `loc` ("LINE:COL") with a message that
// contains `what`.
#define EXPECT_PARSE_ERROR(text, loc, what)                         \
  do {                                                              \
    const std::string _msg = ParseError(text);                      \
    EXPECT_EQ(_msg.rfind(StrCat("<text>:", loc, ": "), 0), 0u)      \
        << "expected location <text>:" << loc << ", got: " << _msg; \
    EXPECT_NE(_msg.find(what), std::string::npos)                   \
        << "expected '" << what << "' in: " << _msg;                \
  } while (0)

Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

#define FIND(var, module, name)           \
  Instruction* var = Find(*module, name); \
  ASSERT_NE(var, nullptr) << "no instruction " << name

// ===========================================================================
// Module texts used by the positive tests below (and by the print/parse
// idempotence test at the end).
// ===========================================================================

constexpr char kHeaderText[] =
    R"(HloModule my_mod, is_scheduled=true, replica_count=2, num_partitions=4, entry_computation_layout={(f32[2,3]{0,1}, s32[])->(f32[2,3]{1,0}, s32[])}, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (0, {}), (1, {}) }, alias_passthrough_params=true, frontend_attributes={zeta="2", alpha="1"}, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output=true

ENTRY main {
  p0 = f32[2,3]{0,1} parameter(0)
  p1 = s32[] parameter(1)
  ROOT t = (f32[2,3], s32[]) tuple(p0, p1)
}
)";

constexpr char kHeaderlessText[] = R"(ENTRY entry_comp {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
)";

constexpr char kHeaderlessNamedText[] = R"(helper {
  x = f32[] parameter(0)
  ROOT y = f32[] exponential(x)
}

main {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=helper
}
)";

constexpr char kCommentsText[] = R"(// a leading line comment
/* a leading
   block comment */ HloModule /*c1*/ m /*c2*/, /*c3*/ replica_count=/*c4*/2 // trailing

// CHECK: lit-style lines between computations
ENTRY /*x*/ e /*y*/ {
  // CHECK: between instructions
  p = /*shape*/ f32[2] /*op*/ parameter(/*n*/0) // end of line
  ROOT r = f32[2]{/*layout*/0} add(/*a*/ p /*b*/, /*c*/ p), /*d*/ metadata={op_name="x" /*inside*/}
  /* after the root */
}
// trailing comment)";

constexpr char kNamesText[] = R"(HloModule m

ENTRY %e {
  %a = f32[] parameter(0)
  b = f32[] parameter(1)
  %c = f32[] add(a, %b)
  %add.1-x_y = f32[] multiply(%c, c)
  ROOT d = f32[] subtract(%add.1-x_y, b)
}
)";

constexpr char kRootNotLastText[] = R"(HloModule m

ENTRY e {
  a = f32[] parameter(0)
  ROOT b = f32[] negate(a)
  c = f32[] exponential(a)
}
)";

constexpr char kNoRootText[] = R"(HloModule m

ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  c = f32[] exponential(a)
}
)";

constexpr char kNestedText[] = R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(f32[4] exponential(f32[4] p))
  m = f32[4] negate(exponential(p))
  ROOT r = f32[4] add(n, f32[4] convert(s8[4] parameter(1)))
}
)";

constexpr char kTupleRefText[] = R"(HloModule m

ENTRY e {
  p = (f32[], (s32[2], pred[])) parameter(0)
  ROOT r = s32[2] add(p#1#0, p#1#0)
}
)";

constexpr char kInlineComputationText[] = R"(HloModule m

ENTRY e {
  v = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(v, z), dimensions={0}, to_apply={
    v = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT m = f32[] maximum(v, b)
  }
}
)";

constexpr char kLayoutsText[] = R"(HloModule m

ENTRY e {
  a = f32[128,256]{1,0:T(8,128)(2,1)} parameter(0)
  b = s4[64]{0:E(4)} parameter(1)
  c = f32[2,4]{1,0:S(1)} parameter(2)
  d = f32[]{:T(256)} parameter(3)
  f = bf16[1024]{0:T(1024)(128)(2,1)} parameter(4)
  g = f32[2,3]{0,1} parameter(5)
  h = f32[2,3] parameter(6)
  ROOT t = (f32[128,256]{1,0:T(8,128)(2,1)}, s4[64]{0:E(4)}) tuple(a, b)
}
)";

constexpr char kDynamicText[] = R"(HloModule m

ENTRY e {
  p = s32[<=16,?] parameter(0)
  q = f32[<=4] parameter(1)
  ROOT t = (s32[<=16,?], f32[<=4]) tuple(p, q)
}
)";

constexpr char kLiteralsText[] = R"(HloModule m

ENTRY e {
  c_pred = pred[3] constant({true, false, 7})
  c_s4 = s4[2] constant({-8, 7})
  c_s8 = s8[2] constant({-128, 127})
  c_s64 = s64[2] constant({-9223372036854775808, 9223372036854775807})
  c_u4 = u4[] constant(15)
  c_u64 = u64[2] constant({18446744073709551615, 0})
  c_f16 = f16[2] constant({0.1, -65504})
  c_bf16 = bf16[] constant(0.1)
  c_f32 = f32[2,3] constant({ {1, -2.5, 3e-2}, {inf, -inf, nan} })
  c_f64 = f64[] constant(0.1)
  c_c64 = c64[2] constant({(1.5, -2), (0, 1)})
  c_c128 = c128[] constant((1e300, -0.5))
  c_e4m3fn = f8e4m3fn[2] constant({448, -nan})
  c_e5m2 = f8e5m2[] constant(-57344)
  c_f4 = f4e2m1fn[3] constant({-6, 0.5, 1.5})
  c_e8m0 = f8e8m0fnu[] constant(0.25)
  c_tuple = (s32[], f32[2]) constant((7, {1, 2}))
  c_elided = f32[1024,1024] constant({...})
  c_nocommas = s32[3] constant({1 2 3})
  c_splat = f32[2,2] constant(3)
  c_empty = f32[0] constant({})
  c_empty2 = f32[2,0] constant({ {}, {} })
  c_3d = s32[2,1,2] constant({ { {1, 2} }, { {3, 4} } })
  ROOT c_nan = f32[2] constant({nan(0x3), -nan})
}
)";

constexpr char kConvText[] = R"(HloModule m

ENTRY e {
  lhs = f32[1,10,10,3] parameter(0)
  rhs = f32[3,3,3,8] parameter(1)
  c = f32[1,5,5,8] convolution(lhs, rhs), window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
  lhs2 = f32[4,2,9,9] parameter(2)
  rhs2 = f32[6,1,3,3] parameter(3)
  ROOT c2 = f32[4,6,7,7] convolution(lhs2, rhs2), window={size=3x3}, dim_labels=bf01_oi01->bf01, feature_group_count=2
}
)";

constexpr char kReduceWindowText[] = R"(HloModule m

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[10] parameter(0)
  z = f32[] constant(0)
  ROOT rw = f32[5] reduce-window(p, z), window={size=5 stride=2 pad=1_1}, to_apply=add_f
}
)";

constexpr char kPadSliceText[] = R"(HloModule m

ENTRY e {
  x = f32[4,5] parameter(0)
  z = f32[] constant(0)
  p = f32[4,9] pad(x, z), padding=0_0x1_-1_1
  q = f32[3,3] pad(f32[2,2] parameter(1), z), padding=-1_2x0_1
  ROOT s = f32[2,2] slice(x), slice={[0:4:2], [1:3]}
}
)";

constexpr char kGatherScatterText[] = R"(HloModule m

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  op = f32[5,3] parameter(0)
  idx = s32[2,1] parameter(1)
  upd = f32[2,3] parameter(2)
  g = f32[2,3] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true
  ROOT sc = f32[5,3] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f, unique_indices=true
}
)";

constexpr char kDotText[] = R"(HloModule m

ENTRY e {
  lhs = f32[2,3,4] parameter(0)
  rhs = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(lhs, rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={high, HIGHEST}
  ROOT inferred = dot(lhs, rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)";

constexpr char kCollectivesText[] = R"(HloModule m, replica_count=8

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[8] parameter(0)
  ar = f32[8] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add_f, channel_id=5, use_global_device_ids=true
  ag = f32[32] all-gather(p), replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}
  ag2 = f32[16] all-gather(p), replica_groups=[4,2]<=[8], dimensions={0}
  all = f32[8] all-reduce(p), replica_groups={}, to_apply=add_f
  cp = f32[8] collective-permute(p), source_target_pairs={{0,1},{1,2},{2,0}}, channel_id=1
  ROOT t = (f32[8], f32[32], f32[16], f32[8], f32[8]) tuple(ar, ag, ag2, all, cp)
}
)";

constexpr char kShardingText[] = R"(HloModule m

ENTRY e {
  a = f32[4] parameter(0), sharding={replicated}
  b = f32[4] parameter(1), sharding={maximal device=1}
  c = f32[4,2] parameter(2), sharding={devices=[2,1]0,1}
  d = f32[4,2] parameter(3), sharding={devices=[4,2]<=[8]}
  f = f32[4,4,2] parameter(4), sharding={devices=[2,2,2]<=[2,2,2]T(2,0,1) last_tile_dim_replicate}
  g = f32[4,4] parameter(5), sharding={devices=[2,1,2]<=[4] last_tile_dims={manual}}
  h = f32[4] parameter(6), sharding={manual}
  i = f32[4] parameter(7), sharding={unknown shard_as 2}
  j = f32[4] parameter(8), sharding={mesh['x'=2,'y'=4], [{'x'}], replicated={'y'}}
  ROOT t = (f32[4], f32[4]) tuple(a, b), sharding={{replicated}, {maximal device=0}}
}
)";

constexpr char kMetadataText[] = R"(HloModule m

ENTRY e {
  p = f32[] parameter(0), metadata={op_type="Add" op_name="jit(f)/add" source_file="model.py" source_line=12 source_column=3 profile_type={1,2} deduplicated_name="dd" preserve_layout=true stack_frame_id=4 scheduling_name="s1"}
  q = f32[] negate(p), metadata={op_type="Neg", op_name="n"}
  ROOT r = f32[] exponential(q), backend_config={"operation_queue_id":"0","force_earliest_schedule":false,"nested":{"s":"}{"}}
  s = f32[] sine(q), backend_config="opaque \"bytes\"\n"
  u = f32[] cosine(q), frontend_attributes={_xla_compute_type="host", composite.attributes={n = 1 : i32}}
}
)";

constexpr char kAsyncText[] = R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) negate-start(p)
  u = ((f32[4]), f32[4], s32[]) negate-update(s)
  d = f32[4] negate-done(u)
  cs = ((f32[4]), f32[4]) custom-call-start(p), custom_call_target="foo"
  cd = f32[4] custom-call-done(cs)
  ars = f32[4] all-reduce-start(p), to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT sum = f32[] add(a, b)
  }
  ard = f32[4] all-reduce-done(ars)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(d, cd, ard)
}
)";

constexpr char kControlText[] = R"(HloModule m

ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  c = f32[] sine(a)
  ROOT d = f32[] exponential(a), control-predecessors={b, %c}
}
)";

constexpr char kMiscOpsText[] = R"(HloModule m

cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(10)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}

body {
  bp = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  next = s32[] add(bi, one)
  bv = f32[4] get-tuple-element(bp), index=1
  ROOT bt = (s32[], f32[4]) tuple(next, bv)
}

fused {
  fp = f32[4] parameter(0)
  ROOT fn = f32[4] negate(fp)
}

br0 {
  x0 = f32[4] parameter(0)
  ROOT y0 = f32[4] negate(x0)
}

br1 {
  x1 = f32[4] parameter(0)
  ROOT y1 = f32[4] exponential(x1)
}

ENTRY e (p: f32[4], i: s32[]) -> f32[4] {
  p = f32[4] parameter(0)
  i = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wv = f32[4] get-tuple-element(w), index=1
  f = f32[4] fusion(wv), kind=kLoop, calls=fused
  io = s32[4] iota(), iota_dimension=0
  cmp = pred[4] compare(p, f), direction=GE, type=TOTALORDER
  b = f32[4,3] broadcast(f), dimensions={0}
  tr = f32[3,4] transpose(b), dimensions={1,0}
  pr = pred[] constant(true)
  c1 = f32[4] conditional(pr, p, f), true_computation=br0, false_computation=br1
  ROOT c2 = f32[4] conditional(i, p, c1), branch_computations={br0, br1}
}, execution_thread="main"
)";

constexpr char kStackFramesText[] = R"(HloModule m

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=4}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY e {
  ROOT p = f32[] parameter(0), metadata={stack_frame_id=1}
}
)";

constexpr char kSignatureText[] = R"(HloModule m

ENTRY e (x: f32[4], y: (s32[], f32[])) -> f32[4] {
  x = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(f32[4] x)
}
)";

constexpr char kInferredShapesText[] = R"(HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = add(a, b)
  t = tuple(a, s)
  g = get-tuple-element(t), index=1
  c = compare(a, g), direction=LT
  ROOT r = select(c, a, b)
}
)";

// Every positive module text of this file.
constexpr const char* kAllTexts[] = {
    kHeaderText,          kHeaderlessText,
    kHeaderlessNamedText, kCommentsText,
    kNamesText,           kRootNotLastText,
    kNoRootText,          kNestedText,
    kTupleRefText,        kInlineComputationText,
    kLayoutsText,         kDynamicText,
    kLiteralsText,        kConvText,
    kReduceWindowText,    kPadSliceText,
    kGatherScatterText,   kDotText,
    kCollectivesText,     kShardingText,
    kMetadataText,        kAsyncText,
    kControlText,         kMiscOpsText,
    kStackFramesText,     kSignatureText,
    kInferredShapesText,
};

// ===========================================================================
// Module structure.
// ===========================================================================

TEST(ParserTest, ModuleHeaderAttributes) {
  auto m = Parse(kHeaderText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "my_mod");
  const ModuleConfig& c = m->config();
  EXPECT_EQ(c.is_scheduled, true);
  EXPECT_EQ(c.replica_count, 2);
  EXPECT_EQ(c.num_partitions, 4);
  ASSERT_TRUE(c.entry_computation_layout.has_value());
  ASSERT_EQ(c.entry_computation_layout->parameters.size(), 2u);
  EXPECT_EQ(c.entry_computation_layout->parameters[0].ToString(),
            "f32[2,3]{0,1}");
  EXPECT_EQ(c.entry_computation_layout->parameters[1].ToString(), "s32[]");
  EXPECT_EQ(c.entry_computation_layout->result.ToString(),
            "(f32[2,3]{1,0}, s32[])");
  ASSERT_TRUE(c.input_output_alias.has_value());
  ASSERT_EQ(c.input_output_alias->size(), 2u);
  EXPECT_EQ((*c.input_output_alias)[0],
            (InputOutputAlias{{0}, 0, {}, InputOutputAlias::Kind::kMayAlias}));
  EXPECT_EQ((*c.input_output_alias)[1],
            (InputOutputAlias{{1}, 1, {}, InputOutputAlias::Kind::kMustAlias}));
  ASSERT_TRUE(c.buffer_donor.has_value());
  EXPECT_EQ(*c.buffer_donor, (std::vector<BufferDonor>{{0, {}}, {1, {}}}));
  EXPECT_EQ(c.alias_passthrough_params, true);
  ASSERT_TRUE(c.frontend_attributes.has_value());
  // Kept sorted by key.
  ASSERT_EQ(c.frontend_attributes->size(), 2u);
  EXPECT_EQ((*c.frontend_attributes)[0].key, "alpha");
  EXPECT_EQ((*c.frontend_attributes)[0].value, "1");
  EXPECT_EQ((*c.frontend_attributes)[1].key, "zeta");
  EXPECT_EQ(c.allow_spmd_sharding_propagation_to_parameters,
            (std::vector<bool>{true, false}));
  EXPECT_EQ(c.allow_spmd_sharding_propagation_to_output,
            (std::vector<bool>{true}));
  ASSERT_NE(m->entry_computation(), nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "main");
  EXPECT_EQ(m->entry_computation()->num_parameters(), 2);
}

TEST(ParserTest, HeaderDefaultsAreUnset) {
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->config().is_scheduled.has_value());
  EXPECT_FALSE(m->config().replica_count.has_value());
  EXPECT_FALSE(m->config().entry_computation_layout.has_value());
  EXPECT_FALSE(m->config().input_output_alias.has_value());
}

TEST(ParserTest, HeaderlessModuleStartingWithEntry) {
  auto m = Parse(kHeaderlessText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computation_count(), 1);
  EXPECT_EQ(m->entry_computation()->name(), "entry_comp");
  EXPECT_EQ(m->entry_computation()->root_instruction()->opcode(),
            Opcode::kNegate);
}

// BUG (see report): the format notes (section 2) say a headerless module is
// named "module_<entry computation name>"; the parser leaves "module".
TEST(ParserTest, HeaderlessModuleName) {
  auto m = Parse(kHeaderlessText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "module_entry_comp");
}

TEST(ParserTest, HeaderlessModuleNameFollowedByBrace) {
  auto m = Parse(kHeaderlessNamedText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computation_count(), 2);
  // Without ENTRY the last computation is the entry.
  EXPECT_EQ(m->entry_computation()->name(), "main");
  FIND(c, m, "c");
  EXPECT_EQ(c->opcode(), Opcode::kCall);
  ASSERT_EQ(c->called_computations().size(), 1u);
  EXPECT_EQ(c->called_computations()[0]->name(), "helper");
}

TEST(ParserTest, SingleInstructionWithName) {
  auto m = Parse("r = f32[4] multiply(f32[4] x, f32[4] y)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->computation_count(), 1);
  const Computation* c = m->entry_computation();
  ASSERT_EQ(c->num_parameters(), 2);
  EXPECT_EQ(c->parameter_instruction(0)->name(), "x");
  EXPECT_EQ(c->parameter_instruction(1)->name(), "y");
  EXPECT_EQ(c->parameter_instruction(0)->shape().ToString(), "f32[4]{0}");
  const Instruction* r = c->root_instruction();
  EXPECT_EQ(r->name(), "r");
  EXPECT_EQ(r->opcode(), Opcode::kMultiply);
  EXPECT_EQ(r->operand(0), c->parameter_instruction(0));
  EXPECT_EQ(r->operand(1), c->parameter_instruction(1));
}

TEST(ParserTest, SingleInstructionWithUnnamedOperands) {
  auto m = Parse("r = f32[4] multiply(f32[4], f32[4])");
  ASSERT_NE(m, nullptr);
  const Computation* c = m->entry_computation();
  ASSERT_EQ(c->num_parameters(), 2);
  EXPECT_EQ(c->parameter_instruction(0)->name(), "_0");
  EXPECT_EQ(c->parameter_instruction(1)->name(), "_1");
}

// BUG (see report): section 9 of the format notes: the left-hand side is
// optional in single-instruction mode ("f32[4] add(f32[4] x, f32[4] y)");
// the parser rejects it at 1:1.
TEST(ParserTest, SingleInstructionWithoutName) {
  auto m = Parse("f32[4] add(f32[4] x, f32[4] y)");
  ASSERT_NE(m, nullptr);
  const Computation* c = m->entry_computation();
  EXPECT_EQ(c->root_instruction()->opcode(), Opcode::kAdd);
  EXPECT_EQ(c->num_parameters(), 2);
}

TEST(ParserTest, CommentsAnywhere) {
  auto m = Parse(kCommentsText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "m");
  EXPECT_EQ(m->config().replica_count, 2);
  FIND(r, m, "r");
  EXPECT_TRUE(r->IsRoot());
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_EQ(r->operand(1)->name(), "p");
  EXPECT_EQ(r->metadata().op_name, "x");
  EXPECT_EQ(m->entry_computation()->instruction_count(), 2);
}

TEST(ParserTest, NamesWithAndWithoutPercent) {
  auto m = Parse(kNamesText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "e");
  FIND(c, m, "c");
  EXPECT_EQ(c->operand(0)->name(), "a");
  EXPECT_EQ(c->operand(1)->name(), "b");
  FIND(x, m, "add.1-x_y");
  EXPECT_EQ(x->operand(0), c);
  EXPECT_EQ(x->operand(1), c);
  FIND(d, m, "d");
  EXPECT_EQ(d->operand(0), x);
  EXPECT_TRUE(d->IsRoot());
}

TEST(ParserTest, RootMarkerNotOnLastInstruction) {
  auto m = Parse(kRootNotLastText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "b");
}

TEST(ParserTest, RootDefaultsToLastInstruction) {
  auto m = Parse(kNoRootText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "c");
}

TEST(ParserTest, NestedAnonymousInstructions) {
  auto m = Parse(kNestedText);
  ASSERT_NE(m, nullptr);
  FIND(p, m, "p");
  FIND(n, m, "n");
  ASSERT_EQ(n->operand_count(), 1);
  const Instruction* e = n->operand(0);
  EXPECT_EQ(e->opcode(), Opcode::kExp);
  EXPECT_EQ(e->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ(e->operand(0), p);
  // Shapes of nested instructions may be inferred.
  FIND(mm, m, "m");
  EXPECT_EQ(mm->operand(0)->opcode(), Opcode::kExp);
  EXPECT_EQ(mm->operand(0)->shape().ToString(), "f32[4]{0}");
  EXPECT_NE(mm->operand(0), e);
  // A nested parameter.
  FIND(r, m, "r");
  const Instruction* cv = r->operand(1);
  EXPECT_EQ(cv->opcode(), Opcode::kConvert);
  EXPECT_EQ(cv->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(cv->operand(0)->parameter_number(), 1);
  EXPECT_EQ(cv->operand(0)->shape().ToString(), "s8[4]{0}");
  EXPECT_EQ(m->entry_computation()->num_parameters(), 2);
  // p, exp, n, exp, m, param(1), convert, r.
  EXPECT_EQ(m->entry_computation()->instruction_count(), 8);
  EXPECT_EQ(m->entry_computation()->root_instruction(), r);
}

TEST(ParserTest, CompactTupleReferences) {
  auto m = Parse(kTupleRefText);
  ASSERT_NE(m, nullptr);
  FIND(p, m, "p");
  FIND(r, m, "r");
  ASSERT_EQ(r->operand_count(), 2);
  const Instruction* inner = r->operand(0);
  EXPECT_EQ(r->operand(1), inner);  // created once, reused
  EXPECT_EQ(inner->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(inner->tuple_index(), 0);
  EXPECT_EQ(inner->shape().ToString(), "s32[2]{0}");
  const Instruction* outer = inner->operand(0);
  EXPECT_EQ(outer->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(outer->tuple_index(), 1);
  EXPECT_EQ(outer->shape().ToString(), "(s32[2]{0}, pred[])");
  EXPECT_EQ(outer->operand(0), p);
  EXPECT_EQ(m->entry_computation()->instruction_count(), 4);
  EXPECT_EQ(m->entry_computation()->root_instruction(), r);
}

// BUG (see report): `t#1` must mean element 1 of `t`. The parser names the
// get-tuple-element it creates "t_1" and looks that name up first, so an
// unrelated instruction the module itself calls "t_1" is taken instead.
TEST(ParserTest, CompactTupleReferenceIgnoresLookalikeNames) {
  auto m = Parse(
      "HloModule m\nENTRY e {\n  t = (f32[], s32[]) parameter(0)\n"
      "  t_1 = f32[] constant(5)\n  ROOT r = s32[] negate(t#1)\n}\n");
  ASSERT_NE(m, nullptr);
  FIND(t, m, "t");
  FIND(r, m, "r");
  const Instruction* op = r->operand(0);
  EXPECT_EQ(op->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(op->shape().ToString(), "s32[]");
  EXPECT_EQ(op->operand_count() > 0 ? op->operand(0) : nullptr, t);
}

// BUG (see report): the name the parser gives the get-tuple-element it
// creates for `t#1` ("t_1") then clashes with a later instruction of that
// name, so this valid module is rejected with "instruction 't_1' is already
// defined in this computation".
TEST(ParserTest, CompactTupleReferenceDoesNotReserveNames) {
  auto m = Parse(
      "HloModule m\nENTRY e {\n  t = (f32[], s32[]) parameter(0)\n"
      "  a = s32[] negate(t#1)\n  t_1 = f32[] constant(5)\n"
      "  ROOT r = (s32[], f32[]) tuple(a, t_1)\n}\n");
  ASSERT_NE(m, nullptr);
  FIND(a, m, "a");
  EXPECT_EQ(a->operand(0)->opcode(), Opcode::kGetTupleElement);
  FIND(r, m, "r");
  EXPECT_EQ(r->operand(1)->opcode(), Opcode::kConstant);
}

TEST(ParserTest, InlineComputation) {
  auto m = Parse(kInlineComputationText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computation_count(), 2);
  FIND(r, m, "r");
  EXPECT_TRUE(r->IsRoot());
  EXPECT_EQ(r->dimensions(), DimVector({0}));
  const Computation* body = r->to_apply();
  ASSERT_NE(body, nullptr);
  EXPECT_NE(body, m->entry_computation());
  EXPECT_EQ(body->num_parameters(), 2);
  EXPECT_EQ(body->root_instruction()->opcode(), Opcode::kMaximum);
  // The body's own `v` shadows nothing: it is the body's parameter 0.
  EXPECT_EQ(body->root_instruction()->operand(0),
            body->parameter_instruction(0));
  EXPECT_EQ(body->parameter_instruction(0)->shape().ToString(), "f32[]");
}

TEST(ParserTest, Layouts) {
  auto m = Parse(kLayoutsText);
  ASSERT_NE(m, nullptr);
  FIND(a, m, "a");
  const Layout& la = a->shape().layout();
  EXPECT_EQ(la.minor_to_major, DimVector({1, 0}));
  ASSERT_EQ(la.tail().tiles.size(), 2u);
  EXPECT_EQ(la.tail().tiles[0].dims, DimVector({8, 128}));
  EXPECT_EQ(la.tail().tiles[1].dims, DimVector({2, 1}));
  FIND(b, m, "b");
  EXPECT_EQ(b->shape().layout().tail().element_size_in_bits, 4);
  FIND(c, m, "c");
  EXPECT_EQ(c->shape().layout().tail().memory_space, 1);
  FIND(d, m, "d");
  ASSERT_EQ(d->shape().layout().tail().tiles.size(), 1u);
  EXPECT_EQ(d->shape().layout().tail().tiles[0].dims, DimVector({256}));
  EXPECT_EQ(d->shape().ToString(), "f32[]{:T(256)}");
  FIND(f, m, "f");
  EXPECT_EQ(f->shape().layout().tail().tiles.size(), 3u);
  FIND(g, m, "g");
  EXPECT_EQ(g->shape().layout().minor_to_major, DimVector({0, 1}));
  // A missing layout gets the default major-to-minor one.
  FIND(h, m, "h");
  EXPECT_TRUE(h->shape().has_layout());
  EXPECT_EQ(h->shape().layout().minor_to_major, DimVector({1, 0}));
  EXPECT_EQ(a->shape().ToString(), "f32[128,256]{1,0:T(8,128)(2,1)}");
}

TEST(ParserTest, ParseShapeApi) {
  struct Row {
    const char* text;
    const char* printed;
  };
  for (Row r :
       {Row{"f32[2,3]", "f32[2,3]{1,0}"}, Row{"f32[2,3]{0,1}", "f32[2,3]{0,1}"},
        Row{"f32[]", "f32[]"}, Row{"f32[]{}", "f32[]"},
        Row{"(f32[], s32[4])", "(f32[], s32[4]{0})"}, Row{"()", "()"},
        Row{"((), (pred[]))", "((), (pred[]))"}, Row{"token[]", "token[]"},
        Row{"opaque[]", "opaque[]"}, Row{"opaque_type[]", "opaque[]"},
        Row{"b(f32[4,16])", "b(f32[4,16]{1,0})"},
        Row{"s32[<=16,?]", "s32[<=16,?]{1,0}"},
        Row{"bf16[1024]{0:T(1024)(128)(2,1)}",
            "bf16[1024]{0:T(1024)(128)(2,1)}"},
        Row{"f32[8,8]{1,0:T(2,*)L(4)E(32)S(2)M(8)}",
            "f32[8,8]{1,0:T(2,*)L(4)E(32)S(2)M(8)}"},
        Row{"u8[10]{0:D(C+~)#(u32)*(u16)}", "u8[10]{0:D(C+~)#(u32)*(u16)}"},
        Row{"f32[4,4]{1,0:SC(0:2)}", "f32[4,4]{1,0:SC(0:2)}"},
        Row{"f32[10]{0:D(C)P(f32[4]{0})}", "f32[10]{0:D(C)P(f32[4]{0})}"}}) {
    SCOPED_TRACE(r.text);
    absl::StatusOr<Shape> s = ParseShape(r.text);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->ToString(), r.printed);
  }
}

TEST(ParserTest, DynamicDimensions) {
  auto m = Parse(kDynamicText);
  ASSERT_NE(m, nullptr);
  FIND(p, m, "p");
  const Shape& s = p->shape();
  EXPECT_EQ(s.dimensions(), DimVector({16, Shape::kUnboundedSize}));
  EXPECT_TRUE(s.is_dynamic_dimension(0));
  EXPECT_TRUE(s.is_dynamic_dimension(1));
  EXPECT_TRUE(s.is_unbounded_dynamic());
  EXPECT_EQ(s.ToString(), "s32[<=16,?]{1,0}");
  FIND(q, m, "q");
  EXPECT_EQ(q->shape().ToString(), "f32[<=4]{0}");
  EXPECT_FALSE(q->shape().is_unbounded_dynamic());
  EXPECT_TRUE(q->shape().is_dynamic());
}

// ===========================================================================
// Literals.
// ===========================================================================

std::vector<uint64_t> Bits(const Instruction* c) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < c->literal().element_count(); ++i) {
    v.push_back(c->literal().GetBits(i));
  }
  return v;
}
using U = std::vector<uint64_t>;

TEST(ParserTest, LiteralsOfEveryKind) {
  auto m = Parse(kLiteralsText);
  ASSERT_NE(m, nullptr);
  FIND(c_pred, m, "c_pred");
  EXPECT_EQ(Bits(c_pred), (U{1, 0, 1}));
  FIND(c_s4, m, "c_s4");
  EXPECT_EQ(c_s4->literal().GetAsInt64(0), -8);
  EXPECT_EQ(c_s4->literal().GetAsInt64(1), 7);
  FIND(c_s8, m, "c_s8");
  EXPECT_EQ(Bits(c_s8), (U{0x80, 0x7F}));
  FIND(c_s64, m, "c_s64");
  EXPECT_EQ(c_s64->literal().GetAsInt64(0), INT64_MIN);
  EXPECT_EQ(c_s64->literal().GetAsInt64(1), INT64_MAX);
  FIND(c_u4, m, "c_u4");
  EXPECT_EQ(c_u4->literal().GetAsUint64(0), 15u);
  FIND(c_u64, m, "c_u64");
  EXPECT_EQ(Bits(c_u64), (U{0xFFFFFFFFFFFFFFFF, 0}));
  FIND(c_f16, m, "c_f16");
  // 0.1 -> 0x2e66 (1.6*2^-4, mantissa round(0.6*1024)=614); -65504 -> 0xfbff.
  EXPECT_EQ(Bits(c_f16), (U{0x2E66, 0xFBFF}));
  FIND(c_bf16, m, "c_bf16");
  EXPECT_EQ(Bits(c_bf16), (U{0x3DCD}));
  FIND(c_f32, m, "c_f32");
  // 1, -2.5, 0.03 (f32 0x3cf5c28f), inf, -inf, quiet nan.
  EXPECT_EQ(Bits(c_f32), (U{0x3F800000, 0xC0200000, 0x3CF5C28F, 0x7F800000,
                            0xFF800000, 0x7FC00000}));
  FIND(c_f64, m, "c_f64");
  EXPECT_EQ(Bits(c_f64), (U{0x3FB999999999999A}));
  FIND(c_c64, m, "c_c64");
  EXPECT_EQ(c_c64->literal().GetComplex(0), std::complex<double>(1.5, -2));
  EXPECT_EQ(c_c64->literal().GetComplex(1), std::complex<double>(0, 1));
  FIND(c_c128, m, "c_c128");
  EXPECT_EQ(c_c128->literal().GetComplex(0), std::complex<double>(1e300, -0.5));
  FIND(c_e4m3fn, m, "c_e4m3fn");
  EXPECT_EQ(Bits(c_e4m3fn), (U{0x7E, 0xFF}));
  FIND(c_e5m2, m, "c_e5m2");
  EXPECT_EQ(Bits(c_e5m2), (U{0xFB}));
  FIND(c_f4, m, "c_f4");
  // -6 = 1 11 1; 0.5 = 0 00 1; 1.5 = 0 01 1.
  EXPECT_EQ(Bits(c_f4), (U{0xF, 0x1, 0x3}));
  FIND(c_e8m0, m, "c_e8m0");
  EXPECT_EQ(Bits(c_e8m0), (U{125}));  // 2^(125-127)
  FIND(c_tuple, m, "c_tuple");
  const Literal& tl = c_tuple->literal();
  ASSERT_EQ(tl.tuple_elements().size(), 2u);
  EXPECT_EQ(tl.tuple_elements()[0].GetAsInt64(0), 7);
  EXPECT_EQ(tl.tuple_elements()[1].GetAsDouble(1), 2.0);
  EXPECT_EQ(tl.ToString(), "(7, {1, 2})");
  FIND(c_elided, m, "c_elided");
  EXPECT_TRUE(c_elided->literal().is_unknown());
  EXPECT_EQ(c_elided->literal().ToString(), "{...}");
  FIND(c_nocommas, m, "c_nocommas");
  EXPECT_EQ(Bits(c_nocommas), (U{1, 2, 3}));
  FIND(c_splat, m, "c_splat");
  EXPECT_EQ(Bits(c_splat), (U{0x40400000, 0x40400000, 0x40400000, 0x40400000}));
  FIND(c_empty, m, "c_empty");
  EXPECT_EQ(c_empty->literal().element_count(), 0);
  FIND(c_empty2, m, "c_empty2");
  EXPECT_EQ(c_empty2->literal().ToString(), "{ {}, {} }");
  FIND(c_3d, m, "c_3d");
  EXPECT_EQ(Bits(c_3d), (U{1, 2, 3, 4}));
  FIND(c_nan, m, "c_nan");
  EXPECT_EQ(Bits(c_nan), (U{0x7F800003, 0xFFC00000}));
}

// ===========================================================================
// Opcode-specific attributes.
// ===========================================================================

TEST(ParserTest, ConvolutionWindowAndDimLabels) {
  auto m = Parse(kConvText);
  ASSERT_NE(m, nullptr);
  FIND(c, m, "c");
  const InstructionAttrs& a = c->attrs();
  ASSERT_TRUE(a.window.has_value());
  ASSERT_EQ(a.window->dimensions.size(), 2u);
  WindowDimension d0;
  d0.size = 3;
  d0.stride = 2;
  d0.padding_low = 0;
  d0.padding_high = 1;
  d0.base_dilation = 1;
  d0.window_dilation = 2;
  d0.window_reversal = false;
  WindowDimension d1 = d0;
  d1.window_reversal = true;
  EXPECT_EQ(a.window->dimensions[0], d0);
  EXPECT_EQ(a.window->dimensions[1], d1);
  ASSERT_TRUE(a.conv_dnums.has_value());
  const ConvolutionDimensionNumbers& dn = *a.conv_dnums;
  // b01f_01io->b01f
  EXPECT_EQ(dn.input_batch_dimension, 0);
  EXPECT_EQ(dn.input_feature_dimension, 3);
  EXPECT_EQ(dn.input_spatial_dimensions, (Ints{1, 2}));
  EXPECT_EQ(dn.kernel_input_feature_dimension, 2);
  EXPECT_EQ(dn.kernel_output_feature_dimension, 3);
  EXPECT_EQ(dn.kernel_spatial_dimensions, (Ints{0, 1}));
  EXPECT_EQ(dn.output_batch_dimension, 0);
  EXPECT_EQ(dn.output_feature_dimension, 3);
  EXPECT_EQ(dn.output_spatial_dimensions, (Ints{1, 2}));
  EXPECT_EQ(dn.input_rank, 4);
  EXPECT_EQ(a.feature_group_count, 1);

  FIND(c2, m, "c2");
  const ConvolutionDimensionNumbers& d2 = *c2->attrs().conv_dnums;
  // bf01_oi01->bf01
  EXPECT_EQ(d2.input_batch_dimension, 0);
  EXPECT_EQ(d2.input_feature_dimension, 1);
  EXPECT_EQ(d2.input_spatial_dimensions, (Ints{2, 3}));
  EXPECT_EQ(d2.kernel_output_feature_dimension, 0);
  EXPECT_EQ(d2.kernel_input_feature_dimension, 1);
  EXPECT_EQ(d2.kernel_spatial_dimensions, (Ints{2, 3}));
  EXPECT_EQ(c2->attrs().feature_group_count, 2);
  WindowDimension plain;
  plain.size = 3;
  EXPECT_EQ(c2->attrs().window->dimensions,
            (std::vector<WindowDimension>{plain, plain}));
}

TEST(ParserTest, OneDimensionalWindow) {
  auto m = Parse(kReduceWindowText);
  ASSERT_NE(m, nullptr);
  FIND(rw, m, "rw");
  ASSERT_TRUE(rw->attrs().window.has_value());
  WindowDimension d;
  d.size = 5;
  d.stride = 2;
  d.padding_low = 1;
  d.padding_high = 1;
  EXPECT_EQ(rw->attrs().window->dimensions, (std::vector<WindowDimension>{d}));
  EXPECT_EQ(rw->to_apply()->name(), "add_f");
}

TEST(ParserTest, PaddingAndSlice) {
  auto m = Parse(kPadSliceText);
  ASSERT_NE(m, nullptr);
  FIND(p, m, "p");
  EXPECT_EQ(p->attrs().padding, (PaddingConfig{{0, 0, 0}, {1, -1, 1}}));
  FIND(q, m, "q");
  EXPECT_EQ(q->attrs().padding, (PaddingConfig{{-1, 2, 0}, {0, 1, 0}}));
  FIND(s, m, "s");
  EXPECT_EQ(s->attrs().slice,
            (std::vector<SliceDimension>{{0, 4, 2}, {1, 3, 1}}));
}

TEST(ParserTest, GatherAndScatterDimensionNumbers) {
  auto m = Parse(kGatherScatterText);
  ASSERT_NE(m, nullptr);
  FIND(g, m, "g");
  ASSERT_TRUE(g->attrs().gather_dnums.has_value());
  GatherDimensionNumbers gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  gd.index_vector_dim = 1;
  EXPECT_EQ(*g->attrs().gather_dnums, gd);
  EXPECT_EQ(g->attrs().gather_slice_sizes, (Ints{1, 3}));
  EXPECT_TRUE(g->attrs().indices_are_sorted);
  FIND(s, m, "sc");
  ASSERT_TRUE(s->attrs().scatter_dnums.has_value());
  ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  EXPECT_EQ(*s->attrs().scatter_dnums, sd);
  EXPECT_TRUE(s->attrs().unique_indices);
  EXPECT_FALSE(s->attrs().indices_are_sorted);
  EXPECT_EQ(s->to_apply()->name(), "add_f");
}

TEST(ParserTest, DotDimensionNumbersAndPrecision) {
  auto m = Parse(kDotText);
  ASSERT_NE(m, nullptr);
  FIND(d, m, "d");
  ASSERT_TRUE(d->attrs().dot_dnums.has_value());
  DotDimensionNumbers dn;
  dn.lhs_batch_dimensions = {0};
  dn.lhs_contracting_dimensions = {2};
  dn.rhs_batch_dimensions = {0};
  dn.rhs_contracting_dimensions = {1};
  EXPECT_EQ(*d->attrs().dot_dnums, dn);
  EXPECT_EQ(d->attrs().operand_precision,
            (std::vector<Precision>{Precision::kHigh, Precision::kHighest}));
  // The shape of a dot may be left out: [2,3,4] x [2,4,5] -> [2,3,5].
  FIND(inferred, m, "inferred");
  EXPECT_EQ(inferred->shape().ToString(), "f32[2,3,5]{2,1,0}");
}

TEST(ParserTest, ReplicaGroupsAndSourceTargetPairs) {
  auto m = Parse(kCollectivesText);
  ASSERT_NE(m, nullptr);
  FIND(ar, m, "ar");
  ASSERT_TRUE(ar->attrs().replica_groups.has_value());
  const ReplicaGroups& g1 = *ar->attrs().replica_groups;
  EXPECT_EQ(g1.form, ReplicaGroups::Form::kExplicit);
  EXPECT_EQ(g1.groups, (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(ar->attrs().channel_id, 5);
  EXPECT_TRUE(ar->attrs().use_global_device_ids);

  FIND(ag, m, "ag");
  const ReplicaGroups& g2 = *ag->attrs().replica_groups;
  EXPECT_EQ(g2.form, ReplicaGroups::Form::kIota);
  EXPECT_EQ(g2.num_groups, 2);
  EXPECT_EQ(g2.group_size, 4);
  EXPECT_EQ(g2.iota_reshape_dims, (Ints{4, 2}));
  EXPECT_EQ(g2.iota_transpose_perm, (Ints{1, 0}));
  // iota(8) as [4,2] = [[0,1],[2,3],[4,5],[6,7]], transposed to
  // [[0,2,4,6],[1,3,5,7]], cut into 2 groups of 4.
  EXPECT_EQ(g2.Expand(), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(ag->dimensions(), DimVector({0}));

  FIND(ag2, m, "ag2");
  const ReplicaGroups& g3 = *ag2->attrs().replica_groups;
  EXPECT_EQ(g3.iota_reshape_dims, (Ints{8}));
  EXPECT_TRUE(g3.iota_transpose_perm.empty());
  EXPECT_EQ(g3.Expand(), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));

  FIND(all, m, "all");
  EXPECT_EQ(all->attrs().replica_groups->form, ReplicaGroups::Form::kExplicit);
  EXPECT_TRUE(all->attrs().replica_groups->groups.empty());

  FIND(cp, m, "cp");
  EXPECT_TRUE(cp->attrs().has_source_target_pairs);
  EXPECT_EQ(cp->attrs().source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_EQ(cp->attrs().channel_id, 1);
}

TEST(ParserTest, Shardings) {
  auto m = Parse(kShardingText);
  ASSERT_NE(m, nullptr);
  using K = Sharding::Kind;
  auto sh = [&](std::string_view name) -> const Sharding& {
    static const Sharding kNone;
    const Instruction* i = Find(*m, name);
    EXPECT_NE(i, nullptr) << name;
    if (i == nullptr || !i->attrs().sharding) {
      ADD_FAILURE() << name << " has no sharding";
      return kNone;
    }
    return *i->attrs().sharding;
  };
  EXPECT_EQ(sh("a").kind, K::kReplicated);
  EXPECT_EQ(sh("b").kind, K::kMaximal);
  EXPECT_EQ(sh("b").device, 1);
  EXPECT_EQ(sh("c").kind, K::kTiled);
  EXPECT_EQ(sh("c").tile_dims, (Ints{2, 1}));
  EXPECT_EQ(sh("c").devices, (Ints{0, 1}));
  EXPECT_FALSE(sh("c").iota);
  EXPECT_EQ(sh("d").kind, K::kTiled);
  EXPECT_TRUE(sh("d").iota);
  EXPECT_EQ(sh("d").tile_dims, (Ints{4, 2}));
  EXPECT_EQ(sh("d").iota_reshape_dims, (Ints{8}));
  EXPECT_TRUE(sh("d").iota_transpose_perm.empty());
  EXPECT_EQ(sh("f").tile_dims, (Ints{2, 2, 2}));
  EXPECT_EQ(sh("f").iota_reshape_dims, (Ints{2, 2, 2}));
  EXPECT_EQ(sh("f").iota_transpose_perm, (Ints{2, 0, 1}));
  EXPECT_TRUE(sh("f").last_tile_dim_replicate);
  EXPECT_EQ(sh("g").last_tile_dims, (std::vector<std::string>{"manual"}));
  EXPECT_EQ(sh("g").iota_reshape_dims, (Ints{4}));
  EXPECT_EQ(sh("h").kind, K::kManual);
  EXPECT_EQ(sh("i").kind, K::kUnknown);
  EXPECT_EQ(sh("i").shard_as, 2);
  EXPECT_EQ(sh("j").kind, K::kNamed);
  EXPECT_EQ(sh("j").text, "{mesh['x'=2,'y'=4], [{'x'}], replicated={'y'}}");
  const Sharding& t = sh("t");
  EXPECT_EQ(t.kind, K::kTuple);
  ASSERT_EQ(t.tuple_elements.size(), 2u);
  EXPECT_EQ(t.tuple_elements[0].kind, K::kReplicated);
  EXPECT_EQ(t.tuple_elements[1].kind, K::kMaximal);
  EXPECT_EQ(t.tuple_elements[1].device, 0);
}

TEST(ParserTest, MetadataBackendConfigFrontendAttributes) {
  auto m = Parse(kMetadataText);
  ASSERT_NE(m, nullptr);
  FIND(p, m, "p");
  ASSERT_TRUE(p->has_metadata());
  OpMetadata md;
  md.op_type = "Add";
  md.op_name = "jit(f)/add";
  md.source_file = "model.py";
  md.source_line = 12;
  md.source_column = 3;
  md.profile_type = {1, 2};
  md.deduplicated_name = "dd";
  md.preserve_layout = true;
  md.stack_frame_id = 4;
  md.scheduling_name = "s1";
  EXPECT_EQ(p->metadata(), md);
  FIND(q, m, "q");
  EXPECT_EQ(q->metadata().op_type, "Neg");
  EXPECT_EQ(q->metadata().op_name, "n");
  FIND(r, m, "r");
  EXPECT_EQ(
      r->backend_config(),
      R"({"operation_queue_id":"0","force_earliest_schedule":false,"nested":{"s":"}{"}})");
  FIND(s, m, "s");
  EXPECT_EQ(s->backend_config(), "opaque \"bytes\"\n");
  FIND(u, m, "u");
  const FrontendAttributes& fa = u->frontend_attributes();
  ASSERT_EQ(fa.size(), 2u);
  // Kept sorted by key ('_' is 0x5f, before 'c').
  EXPECT_EQ(fa[0].key, "_xla_compute_type");
  EXPECT_EQ(fa[0].value, "host");
  EXPECT_FALSE(fa[0].raw);
  EXPECT_EQ(fa[1].key, "composite.attributes");
  EXPECT_EQ(fa[1].value, "{n = 1 : i32}");
  EXPECT_TRUE(fa[1].raw);
}

// attributes.h: FrontendAttributes are "Kept sorted by key, as XLA does"
// (the module header's are sorted; an instruction's must be too).
TEST(ParserTest, InstructionFrontendAttributesAreSorted) {
  auto m = Parse(
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), "
      "frontend_attributes={b=\"2\", a=\"1\"}\n}\n");
  ASSERT_NE(m, nullptr);
  const FrontendAttributes& fa =
      m->entry_computation()->root_instruction()->frontend_attributes();
  ASSERT_EQ(fa.size(), 2u);
  EXPECT_EQ(fa[0].key, "a");
  EXPECT_EQ(fa[1].key, "b");
}

TEST(ParserTest, AsyncShorthand) {
  auto m = Parse(kAsyncText);
  ASSERT_NE(m, nullptr);
  FIND(s, m, "s");
  FIND(u, m, "u");
  FIND(d, m, "d");
  EXPECT_EQ(s->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(u->opcode(), Opcode::kAsyncUpdate);
  EXPECT_EQ(d->opcode(), Opcode::kAsyncDone);
  ASSERT_EQ(s->called_computations().size(), 1u);
  const Computation* w = s->called_computations()[0];
  EXPECT_TRUE(w->IsAsyncWrapper());
  EXPECT_EQ(w->root_instruction()->opcode(), Opcode::kNegate);
  EXPECT_EQ(w->num_parameters(), 1);
  EXPECT_EQ(w->root_instruction()->shape().ToString(), "f32[4]{0}");
  EXPECT_EQ(u->called_computations(),
            std::vector<Computation*>{const_cast<Computation*>(w)});
  EXPECT_EQ(d->called_computations(), u->called_computations());
  EXPECT_EQ(u->operand(0), s);
  EXPECT_EQ(d->operand(0), u);

  FIND(cs, m, "cs");
  ASSERT_EQ(cs->called_computations().size(), 1u);
  const Instruction* cc = cs->called_computations()[0]->root_instruction();
  EXPECT_EQ(cc->opcode(), Opcode::kCustomCall);
  EXPECT_EQ(cc->attrs().custom_call_target, "foo");

  // all-reduce-start is an opcode of its own, not the shorthand.
  FIND(ars, m, "ars");
  EXPECT_EQ(ars->opcode(), Opcode::kAllReduceStart);
  FIND(ard, m, "ard");
  EXPECT_EQ(ard->opcode(), Opcode::kAllReduceDone);
}

TEST(ParserTest, ControlPredecessors) {
  auto m = Parse(kControlText);
  ASSERT_NE(m, nullptr);
  FIND(b, m, "b");
  FIND(c, m, "c");
  FIND(d, m, "d");
  EXPECT_EQ(d->control_predecessors(), (std::vector<Instruction*>{b, c}));
  EXPECT_EQ(b->control_successors(), (std::vector<Instruction*>{d}));
  EXPECT_EQ(c->control_successors(), (std::vector<Instruction*>{d}));
}

TEST(ParserTest, WhileFusionConditionalCompare) {
  auto m = Parse(kMiscOpsText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "e");
  FIND(w, m, "w");
  ASSERT_NE(w->while_condition(), nullptr);
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  FIND(f, m, "f");
  EXPECT_EQ(f->fusion_kind(), FusionKind::kLoop);
  EXPECT_EQ(f->fused_computation()->name(), "fused");
  EXPECT_TRUE(f->fused_computation()->IsFusionComputation());
  FIND(io, m, "io");
  EXPECT_EQ(io->iota_dimension(), 0);
  FIND(cmp, m, "cmp");
  EXPECT_EQ(cmp->comparison_direction(), ComparisonDirection::kGe);
  EXPECT_EQ(cmp->comparison_type(), ComparisonType::kTotalOrder);
  FIND(lt, m, "lt");
  EXPECT_EQ(lt->comparison_direction(), ComparisonDirection::kLt);
  EXPECT_EQ(lt->comparison_type(), ComparisonType::kDefault);
  FIND(b, m, "b");
  EXPECT_EQ(b->dimensions(), DimVector({0}));
  FIND(tr, m, "tr");
  EXPECT_EQ(tr->dimensions(), DimVector({1, 0}));
  FIND(wv, m, "wv");
  EXPECT_EQ(wv->tuple_index(), 1);
  FIND(c1, m, "c1");
  ASSERT_EQ(c1->called_computations().size(), 2u);
  EXPECT_EQ(c1->called_computations()[0]->name(), "br0");
  EXPECT_EQ(c1->called_computations()[1]->name(), "br1");
  FIND(c2, m, "c2");
  ASSERT_EQ(c2->called_computations().size(), 2u);
  EXPECT_EQ(c2->called_computations()[1]->name(), "br1");
  EXPECT_EQ(m->entry_computation()->execution_thread(), "main");
}

TEST(ParserTest, ExecutionThread) {
  auto m = Parse(
      "HloModule m\nhost_fn {\n  ROOT x = f32[] parameter(0)\n}, "
      "execution_thread=\"host\"\nENTRY e {\n  ROOT y = f32[] "
      "parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->FindComputation("host_fn")->execution_thread(), "host");
}

TEST(ParserTest, StackFrames) {
  auto m = Parse(kStackFramesText);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->config().stack_frames.rfind("FileNames", 0), 0u)
      << m->config().stack_frames;
  EXPECT_EQ(
      m->entry_computation()->root_instruction()->metadata().stack_frame_id, 1);
}

TEST(ParserTest, SignatureAndOperandShapes) {
  auto m = Parse(kSignatureText);
  ASSERT_NE(m, nullptr);
  // Signature parameters are decorative: only parameter(N) instructions
  // count.
  EXPECT_EQ(m->entry_computation()->num_parameters(), 1);
}

TEST(ParserTest, InferredShapes) {
  auto m = Parse(kInferredShapesText);
  ASSERT_NE(m, nullptr);
  FIND(s, m, "s");
  EXPECT_EQ(s->shape().ToString(), "f32[4]{0}");
  FIND(t, m, "t");
  EXPECT_EQ(t->shape().ToString(), "(f32[4]{0}, f32[4]{0})");
  FIND(g, m, "g");
  EXPECT_EQ(g->shape().ToString(), "f32[4]{0}");
  FIND(c, m, "c");
  EXPECT_EQ(c->shape().ToString(), "pred[4]{0}");
  FIND(r, m, "r");
  EXPECT_EQ(r->shape().ToString(), "f32[4]{0}");
}

TEST(ParserTest, SourceLocations) {
  auto m = Parse(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "    ROOT b = f32[] negate(a)\n}\n");
  ASSERT_NE(m, nullptr);
  FIND(a, m, "a");
  EXPECT_EQ(a->source_line(), 3);
  EXPECT_EQ(a->source_column(), 3);
  FIND(b, m, "b");
  EXPECT_EQ(b->source_line(), 4);
  EXPECT_EQ(b->source_column(), 5);
}

// ===========================================================================
// Errors, with exact locations.
// ===========================================================================

// Line 4 is "  ROOT b = f32[] negate(zz)": "zz" starts at column 25.
TEST(ParserErrorTest, UndefinedOperand) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] negate(zz)\n}\n",
      "4:25", "instruction 'zz' is not defined");
}

TEST(ParserErrorTest, ForwardReference) {
  // "  a = f32[] negate(b)": "b" at column 20.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n"
      "  ROOT b = f32[] parameter(0)\n}\n",
      "3:20", "instruction 'b' is not defined");
}

TEST(ParserErrorTest, DuplicateInstructionName) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  a = f32[] negate(a)\n}\n",
      "4:3", "'a' is already defined");
}

TEST(ParserErrorTest, UnknownOpcode) {
  // "  ROOT b = f32[] frobnicate(a)": the opcode at column 18.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] frobnicate(a)\n}\n",
      "4:18", "unknown opcode 'frobnicate'");
}

TEST(ParserErrorTest, AsyncShorthandRejectedForRecv) {
  // "  ROOT b = (f32[], u32[], token[]) recv-start(t)": column 36.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  t = token[] after-all()\n"
      "  ROOT b = (f32[], u32[], token[]) recv-start(t)\n}\n",
      "4:36", "recv");
}

TEST(ParserErrorTest, MissingRequiredAttribute) {
  // The instruction (starting with ROOT at column 3) lacks dimensions=.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n"
      "  ROOT t = f32[3,2] transpose(a)\n}\n",
      "4:3", "transpose requires attribute 'dimensions'");
}

TEST(ParserErrorTest, RepeatedAttribute) {
  // "  ROOT t = f32[3,2] transpose(a), dimensions={1,0}, dimensions={1,0}"
  // The second "dimensions=" starts at column 53.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n"
      "  ROOT t = f32[3,2] transpose(a), dimensions={1,0}, dimensions={1,0}\n"
      "}\n",
      "4:53", "attribute 'dimensions' is repeated");
}

TEST(ParserErrorTest, AttributeNotValidForOpcode) {
  // "  ROOT b = f32[] negate(a), dimensions={0}": "dimensions=" at column 29.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] negate(a), dimensions={0}\n}\n",
      "4:29", "'dimensions' is not valid for negate");
}

TEST(ParserErrorTest, BadLayoutRank) {
  // "  a = f32[2,3]{0} parameter(0)": the layout's first entry at column 16.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[2,3]{0} parameter(0)\n}\n", "3:16",
      "layout has 1 dimension(s) but the shape has rank 2");
}

TEST(ParserErrorTest, LayoutNotAPermutation) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[2,3]{1,1} parameter(0)\n}\n", "3:16",
      "permutation");
}

TEST(ParserErrorTest, LiteralOutOfRangeF16) {
  // "  ROOT c = f16[] constant(70000)": the value at column 27.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = f16[] constant(70000)\n}\n", "3:27",
      "out of range for f16");
}

TEST(ParserErrorTest, LiteralOutOfRangeS8) {
  // "  ROOT c = s8[2] constant({1, 200})": "200" at column 31.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = s8[2] constant({1, 200})\n}\n",
      "3:31", "value 200 is out of range for s8");
}

TEST(ParserErrorTest, LiteralOutOfRangeOthers) {
  // "  ROOT c = u8[] constant(-1)": column 26.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = u8[] constant(-1)\n}\n", "3:26",
      "out of range for u8");
  // "  ROOT c = s4[] constant(8)": column 26.
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  ROOT c = s4[] constant(8)\n}\n",
                     "3:26", "out of range for s4");
  // 2^64 does not fit u64. "  ROOT c = u64[] constant(18446744073709551616)"
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = u64[] constant(18446744073709551616)"
      "\n}\n",
      "3:27", "out of range");
  // An integer type takes no decimals. "  ROOT c = s32[] constant(1.5)"
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}\n", "3:27",
      "expected an integer");
}

TEST(ParserErrorTest, LiteralTooFewElements) {
  // "  ROOT c = s32[3] constant({1, 2})": the '}' at column 33.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = s32[3] constant({1, 2})\n}\n", "3:33",
      "needs 3");
}

// BUG (see report, minor): the error points at the ',' before the extra
// element (3:33) rather than at the extra element itself.
TEST(ParserErrorTest, LiteralTooManyElements) {
  // "  ROOT c = s32[2] constant({1, 2, 3})": the extra "3" at column 35.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = s32[2] constant({1, 2, 3})\n}\n",
      "3:35", "more than 2");
}

TEST(ParserErrorTest, LiteralWrongNesting) {
  // "  ROOT c = s32[2,2] constant({1, 2})": "1" at column 31 where '{' is
  // expected.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = s32[2,2] constant({1, 2})\n}\n",
      "3:31", "'{'");
}

TEST(ParserErrorTest, UnterminatedComment) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  /* never closed\n  ROOT c = f32[] "
      "constant(1)\n"
      "}\n",
      "3:3", "unterminated /* comment");
}

TEST(ParserErrorTest, UnterminatedString) {
  // "  ROOT c = f32[] custom-call(), custom_call_target=\"foo": the quote at
  // column 52.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), "
      "custom_call_target=\"foo\n}\n",
      "3:52", "unterminated string");
}

TEST(ParserErrorTest, NulByte) {
  // "  ROOT c = f32[] constant(1)" then a NUL at column 29.
  const std::string text(
      "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\0\n}\n", 54);
  ASSERT_EQ(text[50], '\0');
  EXPECT_PARSE_ERROR(text, "3:29", "NUL byte");
}

TEST(ParserErrorTest, CalleeUsedBeforeDefinition) {
  // Line 5: "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=sum":
  // "sum" at column 57.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[8] parameter(0)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=sum\n}\n"
      "sum {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(x, y)\n}\n",
      "5:57", "computation 'sum' is not defined");
}

// BUG (see report): the second ENTRY keyword (line 5, column 1) is the
// offending token, but the error points at the end of the input (8:1).
TEST(ParserErrorTest, TwoEntryComputations) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY a {\n  ROOT x = f32[] constant(0)\n}\n"
      "ENTRY b {\n  ROOT y = f32[] constant(1)\n}\n",
      "5:1", "more than one ENTRY");
}

TEST(ParserErrorTest, DuplicateComputation) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nc {\n  ROOT x = f32[] constant(0)\n}\n"
      "c {\n  ROOT y = f32[] constant(1)\n}\n",
      "5:1", "computation 'c' is already defined");
}

TEST(ParserErrorTest, NameGluedToEquals) {
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  x=f32[] parameter(0)\n}\n",
                     "3:3", "whitespace");
  // With '%' the '=' may touch the name.
  EXPECT_NE(Parse("HloModule m\nENTRY e {\n  %x= f32[] parameter(0)\n}\n"),
            nullptr);
}

TEST(ParserErrorTest, NameIsAPrimitiveType) {
  EXPECT_PARSE_ERROR("HloModule m\nENTRY e {\n  %f32 = f32[] parameter(0)\n}\n",
                     "3:3", "illegal instruction name 'f32'");
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  %__foo = f32[] parameter(0)\n}\n", "3:3",
      "illegal instruction name '__foo'");
  // A bare keyword or type name is not even a name token.
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  f32 = f32[] parameter(0)\n}\n")
          .rfind("<text>:3:3: ", 0),
      0u);
  EXPECT_NE(
      Parse("HloModule m\nENTRY e {\n  %__xla_x = f32[] parameter(0)\n}\n"),
      nullptr);
}

TEST(ParserErrorTest, TwoRoots) {
  // The second ROOT at line 4, column 3.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n"
      "  ROOT b = f32[] negate(a)\n}\n",
      "4:3", "more than one ROOT");
}

TEST(ParserErrorTest, OperandCount) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] add(a)\n}\n",
      "4:3", "add takes 2 operand(s) but 1 were given");
}

TEST(ParserErrorTest, OperandShapeMismatch) {
  // "  ROOT b = f32[] negate(f32[2] a)": the operand's name at column 32.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  ROOT b = f32[] negate(f32[2] a)\n}\n",
      "4:32", "operand 'a' has shape f32[]");
}

TEST(ParserErrorTest, SignatureResultMismatch) {
  // The signature starts at "(" in line 2, column 9.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e (x: f32[]) -> s32[] {\n"
      "  ROOT x = f32[] parameter(0)\n}\n",
      "2:9", "does not match the root's f32[]");
}

TEST(ParserErrorTest, InlineBodyCannotSeeOuterNames) {
  // "    ROOT m = f32[] maximum(a, outer)": "outer" at column 31.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  outer = f32[] constant(0)\n"
      "  v = f32[8] parameter(0)\n"
      "  ROOT r = f32[] reduce(v, outer), dimensions={0}, to_apply={\n"
      "    a = f32[] parameter(0)\n    b = f32[] parameter(1)\n"
      "    ROOT m = f32[] maximum(a, outer)\n  }\n}\n",
      "8:31", "instruction 'outer' is not defined");
}

TEST(ParserErrorTest, MissingParameterNumber) {
  // The computation's closing brace, line 4 column 1.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(1)\n}\n", "4:1",
      "missing parameter(0)");
}

TEST(ParserErrorTest, DuplicateParameterNumber) {
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(0)\n}\n",
      "4:3", "parameter(0) is defined more than once");
}

TEST(ParserErrorTest, UnknownModuleAttribute) {
  // "HloModule m, foo=1": "foo=" at column 14.
  EXPECT_PARSE_ERROR(
      "HloModule m, foo=1\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}\n",
      "1:14", "unknown module attribute 'foo'");
  // Repeated: the second "replica_count=" at column 31.
  EXPECT_PARSE_ERROR(
      "HloModule m, replica_count=1, replica_count=2\nENTRY e {\n"
      "  ROOT a = f32[] parameter(0)\n}\n",
      "1:31", "'replica_count' is repeated");
}

TEST(ParserErrorTest, TrailingTextAfterSingleInstruction) {
  // "r = f32[] negate(f32[] x) junk": "junk" at column 27.
  EXPECT_PARSE_ERROR("r = f32[] negate(f32[] x) junk", "1:27",
                     "unexpected text after the instruction");
}

TEST(ParserErrorTest, ShardingDeviceCount) {
  // "  ROOT a = f32[4] parameter(0), sharding={devices=[2,2]0,1,2}": the
  // sharding's '{' at column 42.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n"
      "  ROOT a = f32[4] parameter(0), sharding={devices=[2,2]0,1,2}\n}\n",
      "3:42", "sharding has 3 devices but the tile assignment needs 4");
}

TEST(ParserErrorTest, IotaReplicaGroupsProduct) {
  // "  ROOT a = f32[4] all-gather(p), replica_groups=[2,4]<=[4], ..." : the
  // '[' at column 49.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  ROOT a = f32[8] all-gather(p), replica_groups=[2,4]<=[4], "
      "dimensions={0}\n}\n",
      "4:49", "product of the reshape dims");
}

TEST(ParserErrorTest, SourceTargetPairArity) {
  // "  ROOT c = f32[2] collective-permute(p), source_target_pairs={{0,1,2}}":
  // the value's '{' at column 62.
  EXPECT_PARSE_ERROR(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  ROOT c = f32[2] collective-permute(p), "
      "source_target_pairs={{0,1,2}}\n}\n",
      "4:62", "2 elements");
}

TEST(ParserErrorTest, WindowDimensionMismatch) {
  // Line 10: "  ROOT rw = f32[5] reduce-window(p, z), window={size=3x3
  // stride=2}, to_apply=add_f": the window's closing '}' at column 66.
  EXPECT_PARSE_ERROR(
      "HloModule m\nadd_f {\n  a = f32[] parameter(0)\n"
      "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  p = f32[10] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT rw = f32[5] reduce-window(p, z), window={size=3x3 stride=2}, "
      "to_apply=add_f\n}\n",
      "10:66", "window stride has 1 dimensions but size has 2");
}

TEST(ParserErrorTest, EmptyInput) {
  const std::string msg = ParseError("");
  EXPECT_EQ(msg.rfind("<text>:1:1: ", 0), 0u) << msg;
  const std::string msg2 = ParseError("HloModule m\n");
  EXPECT_EQ(msg2.rfind("<text>:2:1: ", 0), 0u) << msg2;
}

TEST(ParserErrorTest, FilenameOption) {
  ParseOptions o;
  o.filename = "foo.hlo";
  absl::StatusOr<std::unique_ptr<Module>> m =
      ParseModule("HloModule m\nENTRY e {\n  ROOT a = f32[] bad(0)\n}\n", o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(std::string(m.status().message()).rfind("foo.hlo:3:18: ", 0), 0u)
      << m.status().message();
}

// ===========================================================================
// Deep nesting must be reported, not crash.
// ===========================================================================

std::string Repeat(std::string_view s, int n) {
  std::string r;
  r.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) r.append(s);
  return r;
}

TEST(ParserErrorTest, DeeplyNestedTupleShape) {
  const std::string text =
      StrCat("HloModule m\nENTRY e {\n  ROOT p = ", Repeat("(", 100000),
             "f32[]", Repeat(")", 100000), " parameter(0)\n}\n");
  const std::string msg = ParseError(text);
  EXPECT_EQ(msg.rfind("<text>:3:", 0), 0u) << msg.substr(0, 200);
  EXPECT_NE(msg.find("nesting too deep"), std::string::npos)
      << msg.substr(0, 200);
}

TEST(ParserErrorTest, DeeplyNestedShapeApi) {
  absl::StatusOr<Shape> s =
      ParseShape(StrCat(Repeat("(", 100000), "f32[]", Repeat(")", 100000)));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("nesting too deep"),
            std::string::npos);
}

TEST(ParserErrorTest, DeeplyNestedOperands) {
  const std::string text = StrCat(
      "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] ",
      Repeat("negate(", 100000), "p", Repeat(")", 100000), "\n}\n");
  const std::string msg = ParseError(text);
  EXPECT_EQ(msg.rfind("<text>:4:", 0), 0u) << msg.substr(0, 200);
  EXPECT_NE(msg.find("nesting too deep"), std::string::npos)
      << msg.substr(0, 200);
}

TEST(ParserErrorTest, DeeplyNestedInlineComputations) {
  // to_apply={ ROOT x = f32[] call(), to_apply={ ... } } nested 100000 deep.
  std::string text =
      "HloModule m\nENTRY e {\n  ROOT r = f32[] call(), to_apply=";
  for (int i = 0; i < 100000; ++i) text += "{ ROOT x = f32[] call(), to_apply=";
  text += "{ ROOT y = f32[] constant(0) }";
  text += Repeat(" }", 100000);
  text += "\n}\n";
  const std::string msg = ParseError(text);
  EXPECT_EQ(msg.rfind("<text>:3:", 0), 0u) << msg.substr(0, 200);
  EXPECT_NE(msg.find("nesting too deep"), std::string::npos)
      << msg.substr(0, 200);
}

TEST(ParserErrorTest, DeeplyNestedBracesInRawBlocks) {
  // Raw blocks are scanned without recursion: any depth is fine.
  const std::string text = StrCat(
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=",
      Repeat("{", 100000), Repeat("}", 100000), "\n}\n");
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message().substr(0, 200);
  EXPECT_EQ(
      (*m)->entry_computation()->root_instruction()->backend_config().size(),
      200000u);
  // Unbalanced: an error at the block's first '{' (column 47), not a crash.
  const std::string bad = StrCat(
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), backend_config=",
      Repeat("{", 100000), "\n}\n");
  const std::string msg = ParseError(bad);
  EXPECT_EQ(msg.rfind("<text>:3:47: ", 0), 0u) << msg.substr(0, 200);
}

TEST(ParserErrorTest, DeeplyNestedTupleLiteral) {
  // A literal nested deeper than its shape.
  const std::string text =
      StrCat("HloModule m\nENTRY e {\n  ROOT c = f32[1] constant(",
             Repeat("{", 100000), "1", Repeat("}", 100000), ")\n}\n");
  const std::string msg = ParseError(text);
  EXPECT_EQ(msg.rfind("<text>:3:", 0), 0u) << msg.substr(0, 200);
}

TEST(ParserErrorTest, MaxDepthOption) {
  // Ten nested tuple parentheses.
  const std::string text =
      StrCat("HloModule m\nENTRY e {\n  ROOT p = ", Repeat("(", 10), "f32[]",
             Repeat(")", 10), " parameter(0)\n}\n");
  ParseOptions o;
  o.max_depth = 8;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text, o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("nesting too deep"),
            std::string::npos);
  // The default limit allows that.
  EXPECT_TRUE(ParseModule(text).ok());
}

// ===========================================================================
// print(parse(print(parse(x)))) == print(parse(x)) for every text above.
// ===========================================================================

TEST(ParserRoundTripTest, PrintParseIsIdempotent) {
  for (const char* text : kAllTexts) {
    auto m1 = Parse(text);
    ASSERT_NE(m1, nullptr);
    const std::string p1 = PrintModule(*m1);
    absl::StatusOr<std::unique_ptr<Module>> m2 = ParseModule(p1);
    ASSERT_TRUE(m2.ok()) << m2.status().message() << "\n--- printed ---\n"
                         << p1;
    const std::string p2 = PrintModule(**m2);
    EXPECT_EQ(p2, p1) << "--- original ---\n" << text;
  }
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Found by the fuzzer: a lone instruction `parameter(1)` has no parameter 0;
// it must be rejected like a computation with a gap in its parameters.
TEST(ParserFuzzRegressionTest, SingleInstructionParameterGap) {
  auto m = ParseModule("p = f32[10] parameter(1)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("missing parameter(0)"),
            std::string::npos)
      << m.status().message();
  auto ok = ParseModule("p = f32[10] parameter(0)");
  EXPECT_TRUE(ok.ok()) << ok.status().message();
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Found by the fuzzer: a bare scalar for an empty array wrote past the end.
TEST(ParserFuzzRegressionTest, ScalarLiteralForEmptyArray) {
  auto m = ParseModule("ENTRY t {\n  ROOT c = c64[0] constant((0, -10e01))\n}");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(
      (*m)->entry_computation()->root_instruction()->literal().element_count(),
      0);
  auto b = ParseModule("ENTRY t {\n  ROOT c = s32[3] constant(7)\n}");
  ASSERT_TRUE(b.ok()) << b.status().message();
  const Literal& lit = (*b)->entry_computation()->root_instruction()->literal();
  EXPECT_EQ(lit.GetAsInt64(0), 7);
  EXPECT_EQ(lit.GetAsInt64(2), 7);
}

}  // namespace
}  // namespace hlogym

namespace hlogym {
namespace {

// Found by the fuzzer: a huge constant with a bad element allocated 4.9 GB
// before failing. Constants are capped at 1 GiB; elided ones cost nothing.
TEST(ParserFuzzRegressionTest, HugeConstantsAreRejectedNotAllocated) {
  auto m = ParseModule("ENTRY e {\n  ROOT c = f32[1234234567] constant(x)\n}");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("too large to materialize"),
            std::string::npos)
      << m.status().message();
  auto elided =
      ParseModule("ENTRY e {\n  ROOT c = f32[1234234567] constant({...})\n}");
  EXPECT_TRUE(elided.ok()) << elided.status().message();
}

}  // namespace
}  // namespace hlogym
