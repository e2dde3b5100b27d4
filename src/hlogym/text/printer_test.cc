#include "hlogym/text/printer.h"

#include <memory>
#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "hlogym/ir/module.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n--- text ---\n" << text;
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

std::string Print(std::string_view text,
                  const PrintOptions& options = PrintOptions::Default()) {
  std::unique_ptr<Module> m = Parse(text);
  if (m == nullptr) return "<parse error>";
  return PrintModule(*m, options);
}

// ===========================================================================
// Inputs and their exact printed forms.
// ===========================================================================

constexpr char kBasicIn[] = R"(HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
)";

constexpr char kBasicOut[] = R"(HloModule m

ENTRY %e (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} add(%a, %b)
}
)";

constexpr char kCalleeIn[] = R"(HloModule m

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum
}
)";

constexpr char kCalleeOut[] = R"(HloModule m

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %e (p: f32[8]) -> f32[] {
  %p = f32[8]{0} parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%sum
}
)";

// Eleven tuple elements: annotations before elements 5 and 10, in the
// result shape, the operand list and the signature.
constexpr char kIndexIn[] = R"(HloModule m

ENTRY e {
  a0 = f32[] parameter(0)
  a1 = s32[2] parameter(1)
  ROOT t = (f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[]) tuple(a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, a0)
}
)";

constexpr char kIndexOut[] = R"(HloModule m

ENTRY %e (a0: f32[], a1: s32[2]) -> (f32[], s32[2], f32[], s32[2], f32[], /*index=5*/s32[2], f32[], s32[2], f32[], s32[2], /*index=10*/f32[]) {
  %a0 = f32[] parameter(0)
  %a1 = s32[2]{0} parameter(1)
  ROOT %t = (f32[], s32[2]{0}, f32[], s32[2]{0}, f32[], /*index=5*/s32[2]{0}, f32[], s32[2]{0}, f32[], s32[2]{0}, /*index=10*/f32[]) tuple(%a0, %a1, %a0, %a1, %a0, /*index=5*/%a1, %a0, %a1, %a0, %a1, /*index=10*/%a0)
}
)";

constexpr char kIndexShortOut[] = R"(HloModule m

ENTRY e (a0: f32[], a1: s32[2]) -> (f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[], s32[2], f32[]) {
  a0 = f32[] parameter(0)
  a1 = s32[2]{0} parameter(1)
  ROOT t = (f32[], s32[2]{0}, f32[], s32[2]{0}, f32[], s32[2]{0}, f32[], s32[2]{0}, f32[], s32[2]{0}, f32[]) tuple(a0, a1, a0, a1, a0, a1, a0, a1, a0, a1, a0)
}
)";

// Six parameters: the signature lists them without annotations (only
// tuple shapes get them), as XLA prints it.
constexpr char kSixParamsIn[] = R"(HloModule m

ENTRY e {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = f32[] parameter(2)
  p3 = f32[] parameter(3)
  p4 = f32[] parameter(4)
  p5 = (f32[], f32[], f32[], f32[], f32[], f32[]) parameter(5)
  ROOT r = f32[] add(p0, p4)
}
)";

constexpr char kSixParamsOut[] = R"(HloModule m

ENTRY %e (p0: f32[], p1: f32[], p2: f32[], p3: f32[], p4: f32[], p5: (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])) -> f32[] {
  %p0 = f32[] parameter(0)
  %p1 = f32[] parameter(1)
  %p2 = f32[] parameter(2)
  %p3 = f32[] parameter(3)
  %p4 = f32[] parameter(4)
  %p5 = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) parameter(5)
  ROOT %r = f32[] add(%p0, %p4)
}
)";

// Attributes written in scrambled order print in XLA's order.
constexpr char kOrderIn[] = R"(HloModule m

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  n = f32[8] negate(p)
  ROOT r = f32[] reduce(p, z), backend_config={"k":1}, metadata={op_type="Reduce" op_name="r"}, control-predecessors={n}, frontend_attributes={a="1",b="2"}, sharding={replicated}, to_apply=sum, dimensions={0}
}
)";

constexpr char kOrderRootLine[] =
    R"(  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%sum, sharding={replicated}, frontend_attributes={a="1",b="2"}, control-predecessors={%n}, metadata={op_type="Reduce" op_name="r"}, backend_config={"k":1})";

// Texts already in canonical form: printing must give them back unchanged.
constexpr char kCanonHeader[] =
    R"(HloModule my_mod, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, buffer_donor={ (0, {}), (1, {}) }, alias_passthrough_params=true, entry_computation_layout={(f32[2,3]{0,1}, s32[])->(f32[2,3]{1,0}, s32[])}, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output={true}, replica_count=2, num_partitions=4, frontend_attributes={alpha="1",zeta="2"}

ENTRY %main (p0: f32[2,3], p1: s32[]) -> (f32[2,3], s32[]) {
  %p0 = f32[2,3]{0,1} parameter(0)
  %p1 = s32[] parameter(1)
  ROOT %t = (f32[2,3]{1,0}, s32[]) tuple(%p0, %p1)
}
)";

constexpr char kCanonControlFlow[] = R"(HloModule m

%cond (cp: (s32[], f32[4])) -> pred[] {
  %cp = (s32[], f32[4]{0}) parameter(0)
  %ci = s32[] get-tuple-element(%cp), index=0
  %lim = s32[] constant(10)
  ROOT %lt = pred[] compare(%ci, %lim), direction=LT
}

%body (bp: (s32[], f32[4])) -> (s32[], f32[4]) {
  %bp = (s32[], f32[4]{0}) parameter(0)
  %bi = s32[] get-tuple-element(%bp), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%bi, %one)
  %bv = f32[4]{0} get-tuple-element(%bp), index=1
  ROOT %bt = (s32[], f32[4]{0}) tuple(%next, %bv)
}

%fused (fp: f32[4]) -> f32[4] {
  %fp = f32[4]{0} parameter(0)
  ROOT %fn = f32[4]{0} negate(%fp)
}

%br0 (x0: f32[4]) -> f32[4] {
  %x0 = f32[4]{0} parameter(0)
  ROOT %y0 = f32[4]{0} negate(%x0)
}

%br1 (x1: f32[4]) -> f32[4] {
  %x1 = f32[4]{0} parameter(0)
  ROOT %y1 = f32[4]{0} exponential(%x1)
}

ENTRY %e (p: f32[4], i: s32[]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %i = s32[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %p)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  %wv = f32[4]{0} get-tuple-element(%w), index=1
  %f = f32[4]{0} fusion(%wv), kind=kLoop, calls=%fused
  %io = s32[4]{0} iota(), iota_dimension=0
  %cmp = pred[4]{0} compare(%p, %f), direction=GE, type=TOTALORDER
  %b = f32[4,3]{1,0} broadcast(%f), dimensions={0}
  %tr = f32[3,4]{1,0} transpose(%b), dimensions={1,0}
  %pr = pred[] constant(true)
  %c1 = f32[4]{0} conditional(%pr, %p, %f), true_computation=%br0, false_computation=%br1
  ROOT %c2 = f32[4]{0} conditional(%i, %p, %c1), branch_computations={%br0, %br1}
}
)";

constexpr char kCanonArrayOps[] = R"(HloModule m

%add_f (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (lhs: f32[1,10,10,3], rhs: f32[3,3,3,8], x: f32[2,3,4], y: f32[2,4,5], op: f32[5,3]) -> f32[5,3] {
  %lhs = f32[1,10,10,3]{3,2,1,0} parameter(0)
  %rhs = f32[3,3,3,8]{3,2,1,0} parameter(1)
  %conv = f32[1,5,5,8]{3,2,1,0} convolution(%lhs, %rhs), window={size=3x3 stride=2x2 pad=0_1x0_1 rhs_dilate=2x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  %x = f32[2,3,4]{2,1,0} parameter(2)
  %y = f32[2,4,5]{2,1,0} parameter(3)
  %dot = f32[2,3,5]{2,1,0} dot(%x, %y), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={high,highest}
  %op = f32[5,3]{1,0} parameter(4)
  %idx = s32[2,1]{1,0} constant({ {0}, {3} })
  %g = f32[2,3]{1,0} gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true
  %sc = f32[5,3]{1,0} scatter(%op, %idx, %g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=%add_f
  %sl = f32[2,2]{1,0} slice(%op), slice={[0:4:2], [1:3]}
  %zero = f32[] constant(0)
  %pd = f32[6,3]{1,0} pad(%sl, %zero), padding=1_2_1x0_1_0
  %rw = f32[5,3]{1,0} reduce-window(%op, %zero), window={size=2x1 pad=1_0x0_0}, to_apply=%add_f
  ROOT %out = f32[5,3]{1,0} add(%sc, %rw)
}
)";

constexpr char kCanonCollectives[] = R"(HloModule m, replica_count=8

%add_f (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %e (p: f32[8]) -> (f32[8], f32[32], f32[8], f32[8], f32[8]) {
  %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}
  %ar = f32[8]{0} all-reduce(%p), channel_id=5, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%add_f
  %ag = f32[32]{0} all-gather(%p), replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}
  %cp = f32[8]{0} collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
  %neg = f32[8]{0} negate(%p), sharding={maximal device=1}, metadata={op_type="Neg" op_name="jit(f)/neg" source_file="model.py" source_line=12}
  %exp = f32[8]{0} exponential(%neg), frontend_attributes={_xla_compute_type="host",composite.attributes={n = 1 : i32}}, control-predecessors={%cp}, backend_config="opaque \"bytes\"\n"
  %s = ((f32[8]{0}), f32[8]{0}, s32[]) negate-start(%exp)
  %d = f32[8]{0} negate-done(%s)
  ROOT %t = (f32[8]{0}, f32[32]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}) tuple(%ar, %ag, %cp, %exp, %d), sharding={{replicated}, {devices=[4,2]<=[8]}, {manual}, {maximal device=0}, {devices=[2,2,2]<=[2,2,2]T(2,0,1) last_tile_dim_replicate}}
}
)";

constexpr char kCanonConstants[] = R"(HloModule m

ENTRY %e () -> (f32[2,2], s32[2,1,2], pred[3], c64[2], u64[], /*index=5*/(s32[], f32[2]), f32[0], f32[1024,1024], f32[2]) {
  %a = f32[2,2]{1,0} constant({ {1, 2.5}, {-3, 0.1} })
  %b = s32[2,1,2]{2,1,0} constant({ { {1, 2} }, { {3, 4} } })
  %c = pred[3]{0} constant({true, false, true})
  %d = c64[2]{0} constant({(1.5, -2), (0, 1)})
  %f = u64[] constant(18446744073709551615)
  %g = (s32[], f32[2]{0}) constant((7, {1, 2}))
  %h = f32[0]{0} constant({})
  %k = f32[1024,1024]{1,0} constant({...})
  %n = f32[2]{0} constant({inf, -nan(0x3)})
  ROOT %t = (f32[2,2]{1,0}, s32[2,1,2]{2,1,0}, pred[3]{0}, c64[2]{0}, u64[], /*index=5*/(s32[], f32[2]{0}), f32[0]{0}, f32[1024,1024]{1,0}, f32[2]{0}) tuple(%a, %b, %c, %d, %f, /*index=5*/%g, %h, %k, %n)
}
)";

constexpr char kCanonCustomCall[] = R"(HloModule m

ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %cc = f32[4]{0} custom-call(%p), custom_call_target="foo", custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={"a":"b"}
}
)";

constexpr char kCanonLayouts[] = R"(HloModule m

ENTRY %e (a: f32[128,256], b: s4[64], c: f32[2,4], d: f32[], f: s32[<=16,?]) -> f32[] {
  %a = f32[128,256]{1,0:T(8,128)(2,1)} parameter(0)
  %b = s4[64]{0:E(4)} parameter(1)
  %c = f32[2,4]{0,1:S(1)} parameter(2)
  %f = s32[<=16,?]{1,0} parameter(4)
  ROOT %d = f32[]{:T(256)} parameter(3)
}
)";

constexpr const char* kCanonTexts[] = {
    kCanonHeader,    kCanonControlFlow, kCanonArrayOps, kCanonCollectives,
    kCanonConstants, kCanonCustomCall,  kCanonLayouts,
};

// ===========================================================================
// Tests.
// ===========================================================================

TEST(PrinterTest, Basic) { EXPECT_EQ(Print(kBasicIn), kBasicOut); }

TEST(PrinterTest, CalleeBeforeCaller) {
  EXPECT_EQ(Print(kCalleeIn), kCalleeOut);
}

TEST(PrinterTest, IndexAnnotations) { EXPECT_EQ(Print(kIndexIn), kIndexOut); }

TEST(PrinterTest, NoAnnotationsBetweenSignatureParameters) {
  EXPECT_EQ(Print(kSixParamsIn), kSixParamsOut);
}

TEST(PrinterTest, AttributeOrder) {
  const std::string out = Print(kOrderIn);
  EXPECT_NE(out.find(StrCat(kOrderRootLine, "\n")), std::string::npos) << out;
}

TEST(PrinterTest, CanonicalTextsPrintUnchanged) {
  for (const char* text : kCanonTexts) {
    EXPECT_EQ(Print(text), text);
  }
}

TEST(PrinterTest, ShortOptions) {
  EXPECT_EQ(Print(kIndexIn, PrintOptions::Short()), kIndexShortOut);
  // No metadata either.
  const std::string out = Print(kOrderIn, PrintOptions::Short());
  EXPECT_NE(
      out.find(
          R"(  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=sum, sharding={replicated}, frontend_attributes={a="1",b="2"}, control-predecessors={n}, backend_config={"k":1})"
          "\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("\nsum (x: f32[], y: f32[]) -> f32[] {\n"),
            std::string::npos)
      << out;
}

TEST(PrinterTest, OperandShapes) {
  PrintOptions o;
  o.print_operand_shapes = true;
  EXPECT_EQ(Print(kBasicIn, o), R"(HloModule m

ENTRY %e (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  ROOT %c = f32[4]{0} add(f32[4]{0} %a, f32[4]{0} %b)
}
)");
  // Tuple-shaped operands carry their annotations.
  const std::string idx = Print(kIndexIn, o);
  EXPECT_NE(idx.find("tuple(f32[] %a0, s32[2]{0} %a1, f32[] %a0, s32[2]{0} "
                     "%a1, f32[] %a0, /*index=5*/s32[2]{0} %a1, "),
            std::string::npos)
      << idx;
  // Operand shapes parse back.
  std::unique_ptr<Module> m = Parse(Print(kCanonArrayOps, o));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(PrintModule(*m), kCanonArrayOps);
}

TEST(PrinterTest, IndividualOptions) {
  PrintOptions no_meta;
  no_meta.print_metadata = false;
  std::string out = Print(kOrderIn, no_meta);
  EXPECT_EQ(out.find("metadata="), std::string::npos) << out;
  EXPECT_NE(out.find("backend_config={\"k\":1}"), std::string::npos) << out;

  PrintOptions no_cfg;
  no_cfg.print_backend_config = false;
  out = Print(kOrderIn, no_cfg);
  EXPECT_EQ(out.find("backend_config"), std::string::npos) << out;
  EXPECT_NE(out.find("metadata={op_type=\"Reduce\" op_name=\"r\"}"),
            std::string::npos)
      << out;

  PrintOptions no_sig;
  no_sig.print_computation_signature = false;
  out = Print(kBasicIn, no_sig);
  EXPECT_NE(out.find("\nENTRY %e {\n"), std::string::npos) << out;
  // And that still parses.
  EXPECT_NE(Parse(out), nullptr);

  PrintOptions no_pct;
  no_pct.print_percent = false;
  out = Print(kBasicIn, no_pct);
  EXPECT_NE(out.find("  ROOT c = f32[4]{0} add(a, b)\n"), std::string::npos)
      << out;
}

// BUG (see report): a quoted backend_config whose value happens to be a
// balanced {...} block is printed raw; raw blocks have their whitespace
// runs collapsed when parsed, so the value changes ("{\"a\":  1}" becomes
// "{\"a\": 1}") and print(parse(print(parse(x)))) != print(parse(x)).
TEST(PrinterTest, QuotedBackendConfigKeepsItsBytes) {
  const std::string in =
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), "
      "backend_config=\"{\\\"a\\\":  1}\"\n}\n";
  std::unique_ptr<Module> m1 = Parse(in);
  ASSERT_NE(m1, nullptr);
  const std::string value = "{\"a\":  1}";  // two spaces
  ASSERT_EQ(m1->entry_computation()->root_instruction()->backend_config(),
            value);
  const std::string p1 = PrintModule(*m1);
  std::unique_ptr<Module> m2 = Parse(p1);
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(m2->entry_computation()->root_instruction()->backend_config(),
            value)
      << p1;
  EXPECT_EQ(PrintModule(*m2), p1);
}

TEST(PrinterTest, LargeConstants) {
  // 17 elements: elided only when print_large_constants is off.
  std::string in =
      "HloModule m\nENTRY e {\n  ROOT c = s32[17] constant({0, 1, 2, 3, 4, 5, "
      "6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})\n}\n";
  std::string full = Print(in);
  EXPECT_NE(full.find("constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                      "14, 15, 16})"),
            std::string::npos)
      << full;
  PrintOptions o;
  o.print_large_constants = false;
  std::string elided = Print(in, o);
  EXPECT_NE(elided.find("ROOT %c = s32[17]{0} constant({...})"),
            std::string::npos)
      << elided;
  // 16 elements still print.
  std::string small =
      Print("HloModule m\nENTRY e {\n  ROOT c = s32[16] constant(1)\n}\n", o);
  EXPECT_NE(small.find("constant({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
                       "1, 1})"),
            std::string::npos)
      << small;
}

TEST(PrinterTest, PrintInstructionAndComputation) {
  std::unique_ptr<Module> m = Parse(kCalleeIn);
  ASSERT_NE(m, nullptr);
  const Computation* entry = m->entry_computation();
  EXPECT_EQ(PrintInstruction(*entry->root_instruction()),
            "ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%sum");
  EXPECT_EQ(PrintInstruction(*entry->parameter_instruction(0)),
            "%p = f32[8]{0} parameter(0)");
  EXPECT_EQ(PrintComputation(*m->FindComputation("sum")),
            R"(%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
)");
  EXPECT_EQ(
      PrintComputation(*entry).rfind("ENTRY %e (p: f32[8]) -> f32[] {\n", 0),
      0u);
}

TEST(PrinterTest, ValuePrinters) {
  EXPECT_EQ(QuoteString("a\"b\\c\nd\te"), R"("a\"b\\c\nd\te")");
  EXPECT_EQ(QuoteString(std::string("\x01", 1)), R"("\001")");
  Window w;
  WindowDimension d;
  d.size = 3;
  d.stride = 2;
  d.padding_low = 1;
  d.padding_high = 0;
  w.dimensions = {d, d};
  EXPECT_EQ(WindowToString(w), "{size=3x3 stride=2x2 pad=1_0x1_0}");
  PaddingConfig p = {{0, 1, 0}, {2, -3, 0}};
  EXPECT_EQ(PaddingConfigToString(p), "0_1x2_-3");
  p[1].interior = 4;
  EXPECT_EQ(PaddingConfigToString(p), "0_1_0x2_-3_4");
  ReplicaGroups g;
  g.groups = {{0, 1}, {2, 3}};
  EXPECT_EQ(ReplicaGroupsToString(g), "{{0,1},{2,3}}");
  Sharding s;
  s.kind = Sharding::Kind::kMaximal;
  s.device = 3;
  EXPECT_EQ(ShardingToString(s), "{maximal device=3}");
  OpMetadata md;
  md.op_name = "x";
  md.source_line = 7;
  EXPECT_EQ(MetadataToString(md), R"({op_name="x" source_line=7})");
}

// ===========================================================================
// print(parse(print(parse(x)))) == print(parse(x)).
// ===========================================================================

void ExpectIdempotent(std::string_view text, const PrintOptions& o) {
  std::unique_ptr<Module> m1 = Parse(text);
  ASSERT_NE(m1, nullptr);
  const std::string p1 = PrintModule(*m1, o);
  absl::StatusOr<std::unique_ptr<Module>> m2 = ParseModule(p1);
  ASSERT_TRUE(m2.ok()) << m2.status().message() << "\n--- printed ---\n" << p1;
  EXPECT_EQ(PrintModule(**m2, o), p1) << "--- original ---\n" << text;
}

TEST(PrinterTest, PrintParseIsIdempotent) {
  const char* inputs[] = {kBasicIn, kCalleeIn, kIndexIn, kSixParamsIn,
                          kOrderIn};
  for (const PrintOptions& o :
       {PrintOptions::Default(), PrintOptions::Short()}) {
    for (const char* text : inputs) ExpectIdempotent(text, o);
    for (const char* text : kCanonTexts) ExpectIdempotent(text, o);
  }
  PrintOptions shapes;
  shapes.print_operand_shapes = true;
  for (const char* text : kCanonTexts) ExpectIdempotent(text, shapes);
}

}  // namespace
}  // namespace hlogym
