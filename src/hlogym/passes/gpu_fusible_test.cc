#include "hlogym/passes/gpu_fusible.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "hlogym/ir/str_util.h"
#include "hlogym/passes/pass_test_util.h"

namespace hlogym {
namespace {

using test::ParseAndVerify;

constexpr std::string_view kAdd = R"(
add {
  add_lhs = f32[] parameter(0)
  add_rhs = f32[] parameter(1)
  ROOT add_sum = f32[] add(add_lhs, add_rhs)
}
)";

// Parses `text` into module_; stops the test when it does not parse.
#define PARSE(text)                  \
  do {                               \
    Parse(text);                     \
    ASSERT_FALSE(HasFatalFailure()); \
  } while (0)

// Parses a module and finds instructions by name in any computation.
class GpuFusibleTest : public ::testing::Test {
 protected:
  void Parse(std::string_view text) {
    module_ = ParseAndVerify(text);
    ASSERT_NE(module_, nullptr);
  }
  const Instruction& I(std::string_view name) {
    if (module_ != nullptr) {
      for (const auto& c : module_->computations()) {
        if (Instruction* i = c->FindInstruction(name)) return *i;
      }
    }
    ADD_FAILURE() << "no instruction " << name;
    return dummy_;
  }
  const Computation& Fused(std::string_view fusion) {
    const Instruction& f = I(fusion);
    if (f.opcode() == Opcode::kFusion && f.fused_computation() != nullptr) {
      return *f.fused_computation();
    }
    ADD_FAILURE() << name_of(f) << " is not a fusion";
    return *dummy_computation_;
  }
  static std::string name_of(const Instruction& i) { return i.name(); }

  std::unique_ptr<Module> module_;
  Instruction dummy_{Opcode::kConstant, Shape(PrimitiveType::kF32, {})};
  std::unique_ptr<Computation> dummy_computation_ =
      std::make_unique<Computation>("dummy");
};

// ---------------------------------------------------------------------------
// Classification.

class GpuFusibleClassifyTest : public GpuFusibleTest {};

TEST_F(GpuFusibleClassifyTest, Reductions) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
add2 {
  a0 = f32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  x0 = f32[] add(a0, b0)
  x1 = s32[] add(a1, b1)
  ROOT t = (f32[], s32[]) tuple(x0, x1)
}
ENTRY e {
  p = f32[1024,1024] parameter(0)
  ip = s32[1024,1024] parameter(1)
  q = f32[16,4] parameter(2)
  r5 = f32[16,5] parameter(3)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  row = f32[1024] reduce(p, z), dimensions={1}, to_apply=add
  col = f32[1024] reduce(p, z), dimensions={0}, to_apply=add
  small_col = f32[4] reduce(q, z), dimensions={0}, to_apply=add
  row5 = f32[16] reduce(r5, z), dimensions={1}, to_apply=add
  row4 = f32[16] reduce(q, z), dimensions={1}, to_apply=add
  vr = (f32[1024], s32[1024]) reduce(p, ip, z, zi), dimensions={1}, to_apply=add2
  qi = s32[16,4] convert(q)
  svr = (f32[4], s32[4]) reduce(q, qi, z, zi), dimensions={0}, to_apply=add2
  ROOT t = (f32[1024], f32[1024], f32[4], f32[16], f32[16]) tuple(row, col, small_col, row5, row4)
}
)"));
  // Row reduction f32[1024,1024] -> f32[1024]: the reduction emitter.
  EXPECT_TRUE(IsInputFusibleReduction(I("row")));
  EXPECT_TRUE(IsInputFusible(I("row")));
  EXPECT_TRUE(IsFusible(I("row")));
  EXPECT_TRUE(IsLoopFusibleAsProducer(I("row")));
  EXPECT_TRUE(IsLoopFusibleAsConsumer(I("row")));
  EXPECT_FALSE(IsUniversallyLoopFusible(I("row")));
  EXPECT_EQ(CountUnnestedReductions(I("row")), 1);
  EXPECT_TRUE(IsInputFusibleReduction(I("col")));
  // Reducing 16 rows of a 4-wide minor dimension: the elemental emitter is
  // faster (column reduction with fewer than 32 reduced rows).
  EXPECT_FALSE(IsInputFusibleReduction(I("small_col")));
  EXPECT_FALSE(IsInputFusible(I("small_col")));
  EXPECT_TRUE(IsLoopFusibleAsProducer(I("small_col")));
  EXPECT_EQ(CountUnnestedReductions(I("small_col")), 0);
  // Row widths: 5 neither reaches a warp nor divides it; 4 divides it.
  EXPECT_FALSE(IsInputFusibleReduction(I("row5")));
  EXPECT_TRUE(IsInputFusibleReduction(I("row4")));
  // Variadic reductions: consumers only.
  EXPECT_TRUE(IsInputFusibleReduction(I("vr")));
  EXPECT_FALSE(IsLoopFusibleAsProducer(I("vr")));
  EXPECT_TRUE(IsLoopFusibleAsConsumer(I("vr")));
  EXPECT_FALSE(IsNestableVariadicReduction(I("vr")));
  EXPECT_TRUE(IsNestableVariadicReduction(I("svr")));
  EXPECT_FALSE(IsNestableVariadicReduction(I("row")));
  // Significant reduce: >= 16 inputs per output.
  EXPECT_TRUE(ContainsSignificantReduce(I("row")));
  EXPECT_FALSE(ContainsSignificantReduce(I("row4")));  // 4 per output
  EXPECT_TRUE(ContainsSignificantReduce(I("small_col")));
}

TEST_F(GpuFusibleClassifyTest, Transposes) {
  PARSE(R"(HloModule m
ENTRY e {
  t0 = f32[64,64] parameter(0)
  small = f32[4,4] parameter(1)
  v = f32[1,64] parameter(2)
  w = f32[8,1024] parameter(3)
  x = f32[8,512] parameter(4)
  tr = f32[64,64]{1,0} transpose(t0), dimensions={1,0}
  trs = f32[4,4] transpose(small), dimensions={1,0}
  cp = f32[64,64]{0,1} copy(t0)
  cps = f32[4,4]{0,1} copy(small)
  cpn = f32[64,64]{1,0} copy(t0)
  trb = f32[64,1] transpose(v), dimensions={1,0}
  trw = f32[1024,8] transpose(w), dimensions={1,0}
  trx = f32[512,8] transpose(x), dimensions={1,0}
  bc = f32[64,64] bitcast(t0)
  ROOT t = (f32[64,64], f32[4,4], f32[64,64]{0,1}, f32[4,4]{0,1}, f32[64,1]) tuple(tr, trs, cp, cps, trb)
}
)");
  EXPECT_TRUE(IsTiledTranspose(I("tr")));
  EXPECT_TRUE(IsInputFusibleTranspose(I("tr")));
  EXPECT_TRUE(IsInputFusible(I("tr")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("tr")));
  EXPECT_TRUE(IsPhysicallyTransposing(I("tr")));
  EXPECT_EQ(SharedMemoryUsage(I("tr")), 32 * 33 * 4);
  // Too small to tile, but still moves data.
  EXPECT_FALSE(IsInputFusibleTranspose(I("trs")));
  EXPECT_TRUE(IsPhysicallyTransposing(I("trs")));
  EXPECT_EQ(SharedMemoryUsage(I("trs")), 0);
  // A layout-changing copy is a tiled transpose and not loop-fusible.
  EXPECT_TRUE(IsInputFusibleTranspose(I("cp")));
  EXPECT_FALSE(IsUniversallyLoopFusible(I("cp")));
  EXPECT_FALSE(IsLoopFusibleAsProducer(I("cp")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("cps")));
  EXPECT_TRUE(IsPhysicallyTransposing(I("cps")));
  EXPECT_FALSE(IsInputFusibleTranspose(I("cpn")));
  EXPECT_TRUE(IsPhysicallyTransposing(I("cpn")));  // any copy
  // Moving a size-1 dimension is a bitcast.
  EXPECT_FALSE(IsPhysicallyTransposing(I("trb")));
  EXPECT_FALSE(IsTiledTranspose(I("trb")));
  // 8 x 1024 reaches the 64 * 128 product; 8 x 512 does not.
  EXPECT_TRUE(IsTiledTranspose(I("trw")));
  EXPECT_FALSE(IsTiledTranspose(I("trx")));
  // Bitcasts are never input-fusible transposes nor useful consumers.
  EXPECT_FALSE(IsInputFusibleTranspose(I("bc")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("bc")));
  EXPECT_FALSE(IsLoopFusibleAsConsumer(I("bc")));
}

TEST_F(GpuFusibleClassifyTest, LoopFusibleLists) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_custom {
  fp = f32[4] parameter(0)
  ROOT fn = f32[4] negate(fp)
}
fused_loop {
  lp = f32[4] parameter(0)
  ROOT ln = f32[4] negate(lp)
}
ENTRY e {
  p = f32[4] parameter(0)
  m = f32[4,4] parameter(1)
  n = f32[4] negate(p)
  a = f32[4] add(p, n)
  b = f32[4,8] broadcast(p), dimensions={0}
  io = s32[4] iota(), iota_dimension=0
  c = f32[4] constant({1, 2, 3, 4})
  bcv = s32[4] bitcast-convert(p)
  d = f32[4,4] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  cc = f32[4] custom-call(p), custom_call_target="foo"
  cf = f32[4] fusion(p), kind=kCustom, calls=fused_custom
  lf = f32[4] fusion(p), kind=kLoop, calls=fused_loop
  sl = f32[2] slice(p), slice={[0:2]}
  rv = f32[4] reverse(p), dimensions={0}
  c0 = f32[] constant(0)
  pd = f32[6] pad(p, c0), padding=1_1
  rw = f32[3] reduce-window(p, c0), window={size=2}, to_apply=add
  ROOT t = (f32[4], f32[4]) tuple(a, cf)
}
)"));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("n")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("a")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("b")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("bcv")));  // keeps the width
  EXPECT_TRUE(IsUniversallyLoopFusible(I("lf")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("sl")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("rv")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("pd")));
  EXPECT_TRUE(IsUniversallyLoopFusible(I("rw")));
  // Iota and constants: producers only.
  EXPECT_FALSE(IsUniversallyLoopFusible(I("io")));
  EXPECT_TRUE(IsLoopFusibleAsProducer(I("io")));
  EXPECT_FALSE(IsLoopFusibleAsConsumer(I("io")));
  EXPECT_TRUE(IsLoopFusibleAsProducer(I("c")));
  // Not fusible at all.
  for (std::string_view name : {"p", "d", "cc", "cf", "t"}) {
    EXPECT_FALSE(IsFusible(I(name))) << name;
    EXPECT_FALSE(IsLoopFusibleAsProducer(I(name))) << name;
    EXPECT_FALSE(IsInputFusible(I(name))) << name;
  }
  EXPECT_TRUE(IsFusible(I("lf")));
  EXPECT_TRUE(IsFusible(I("io")));
  EXPECT_TRUE(IsFusible(I("rw")));
  EXPECT_FALSE(IsUniversallyLoopFusible(I("cf")));
}

TEST_F(GpuFusibleClassifyTest, ScatterAndInputFusions) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_scatter {
  so = f32[100,8] parameter(0)
  si = s32[5,1] parameter(1)
  su = f32[5,8] parameter(2)
  ROOT ss = f32[100,8] scatter(so, si, su), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
fused_scatter_loop {
  lo = f32[100,8] parameter(0)
  li = s32[5,1] parameter(1)
  lu = f32[5,8] parameter(2)
  ROOT ls = f32[100,8] scatter(lo, li, lu), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
fused_lost_hero {
  hp = f32[64,4] parameter(0)
  ROOT hn = f32[64,4] negate(hp)
}
fused_reduce {
  rp = f32[64,128] parameter(0)
  rz = f32[] constant(0)
  rr = f32[64] reduce(rp, rz), dimensions={1}, to_apply=add
  ROOT rn = f32[64] negate(rr)
}
ENTRY e {
  o = f32[100,8] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5,8] parameter(2)
  x = f32[64,4] parameter(3)
  y = f32[64,128] parameter(4)
  s = f32[100,8] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  fs = f32[100,8] fusion(o, i, u), kind=kInput, calls=fused_scatter
  fl = f32[100,8] fusion(o, i, u), kind=kLoop, calls=fused_scatter_loop
  lost = f32[64,4] fusion(x), kind=kInput, calls=fused_lost_hero
  fr = f32[64] fusion(y), kind=kInput, calls=fused_reduce
  ROOT t = (f32[100,8], f32[100,8], f32[100,8], f32[64,4], f32[64]) tuple(s, fs, fl, lost, fr)
}
)"));
  EXPECT_TRUE(IsInputFusibleScatter(I("s")));
  EXPECT_TRUE(IsInputFusible(I("s")));
  EXPECT_TRUE(IsFusible(I("s")));
  EXPECT_FALSE(IsLoopFusibleAsProducer(I("s")));
  EXPECT_TRUE(IsInputFusibleScatter(I("fs")));
  EXPECT_FALSE(IsInputFusibleScatter(I("fl")));  // only kInput fusions
  // A kInput fusion without an input hero is a loop consumer.
  EXPECT_FALSE(IsInputFusible(I("lost")));
  EXPECT_TRUE(IsLoopFusibleAsConsumer(I("lost")));
  EXPECT_FALSE(IsLoopFusibleAsProducer(I("lost")));
  // A fusion whose hero (under the negate) is a real reduction.
  EXPECT_TRUE(IsInputFusibleReduction(I("fr")));
  EXPECT_FALSE(IsLoopFusibleAsConsumer(I("fr")));
  EXPECT_EQ(CountUnnestedReductions(I("fr")), 1);
  EXPECT_EQ(ChooseFusionKind(I("x"), I("fr")), FusionKind::kInput);
  EXPECT_EQ(ChooseFusionKind(I("fr"), I("lost")), FusionKind::kInput);
  EXPECT_EQ(ChooseFusionKind(I("x"), I("lost")), FusionKind::kLoop);
}

// ---------------------------------------------------------------------------
// Heroes and fusion kinds.

class GpuFusibleHeroTest : public GpuFusibleTest {};

TEST_F(GpuFusibleHeroTest, FindHero) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_a {
  ap = f32[64,128] parameter(0)
  az = f32[] constant(0)
  ar = f32[64] reduce(ap, az), dimensions={1}, to_apply=add
  an = f32[64] negate(ar)
  ROOT ac = f32[64] convert(an)
}
fused_b {
  bp = f32[64,128] parameter(0)
  bz = f32[] constant(0)
  br = f32[64] reduce(bp, bz), dimensions={1}, to_apply=add
  bn = f32[64] negate(br)
  be = f32[64] exponential(bn)
  ROOT bt = (f32[64], f32[64]) tuple(bn, be)
}
fused_c {
  cp = f32[64,64] parameter(0)
  ct = f32[64,64] transpose(cp), dimensions={1,0}
  ROOT cb = f32[4096] bitcast(ct)
}
fused_d {
  dp = f32[64] parameter(0)
  ROOT dn = f32[64] negate(dp)
}
ENTRY e {
  p = f32[64,128] parameter(0)
  q = f32[64,64] parameter(1)
  z = f32[] constant(0)
  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  n = f32[64] negate(r)
  fa = f32[64] fusion(p), kind=kInput, calls=fused_a
  fb = (f32[64], f32[64]) fusion(p), kind=kLoop, calls=fused_b
  fc = f32[4096] fusion(q), kind=kInput, calls=fused_c
  fd = f32[64] fusion(n), kind=kLoop, calls=fused_d
  ROOT t = (f32[64], (f32[64], f32[64]), f32[4096], f32[64]) tuple(fa, fb, fc, fd)
}
)"));
  // Through convert and negate to the reduce.
  EXPECT_EQ(&FindHero(I("ac")), &I("ar"));
  EXPECT_EQ(&FindHero(I("fa")), &I("ar"));
  // bn has two users: it is its own hero; be walks up to it only.
  EXPECT_EQ(&FindHero(I("bn")), &I("bn"));
  EXPECT_EQ(&FindHero(I("be")), &I("bn"));
  EXPECT_EQ(&FindHero(I("fb")), &I("bn"));
  EXPECT_EQ(&FindHero(I("cb")), &I("ct"));
  EXPECT_EQ(&FindHero(I("fc")), &I("ct"));
  // Parameters are the kernel boundary.
  EXPECT_EQ(&FindHero(I("dn")), &I("dn"));
  EXPECT_EQ(&FindHero(I("fd")), &I("dn"));
  // Unfused instructions are their own kernel.
  EXPECT_EQ(&FindHero(I("n")), &I("n"));
  EXPECT_TRUE(IsRealReductionHero(I("ac"), I("ar")));  // race-free
  EXPECT_TRUE(IsMultiOutputFusion(I("fb")));
  EXPECT_FALSE(IsMultiOutputFusion(I("fa")));
  EXPECT_EQ(GetKernelRoots(I("fb")).size(), 2u);
  EXPECT_EQ(GetKernelRoots(I("n")).size(), 1u);
}

TEST_F(GpuFusibleHeroTest, RaceFreeBounds) {
  ReductionDimensions row;
  row.dims[0] = 8;
  row.dims[1] = 100;
  row.dims[2] = 16 * 1024;
  EXPECT_TRUE(IsReductionRaceFree(row));
  row.dims[2] = 16 * 1024 + 1;
  EXPECT_FALSE(IsReductionRaceFree(row));
  row.dims[2] = 32;
  row.dims[0] = 9;
  EXPECT_FALSE(IsReductionRaceFree(row));
  ReductionDimensions col;
  col.is_row_reduction = false;
  col.dims[1] = 4096;
  EXPECT_TRUE(IsReductionRaceFree(col));
  col.dims[1] = 4097;
  EXPECT_FALSE(IsReductionRaceFree(col));
}

TEST_F(GpuFusibleHeroTest, UnboundedReductionUnderEpilogueIsNotAHero) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused {
  p = f32[32768] parameter(0)
  z = f32[] constant(0)
  r = f32[] reduce(p, z), dimensions={0}, to_apply=add
  ROOT n = f32[] negate(r)
}
ENTRY e {
  x = f32[32768] parameter(0)
  ROOT f = f32[] fusion(x), kind=kInput, calls=fused
}
)"));
  // 32768 reduced elements need atomics: not race-free, so not a hero
  // below an epilogue, though still a real reduction as a root.
  EXPECT_FALSE(IsRealReductionHero(I("n"), I("r")));
  EXPECT_TRUE(IsRealReductionHero(I("r"), I("r")));
  EXPECT_FALSE(IsInputFusibleReduction(I("f")));
  EXPECT_EQ(FusionKindForComputation(Fused("f")), FusionKind::kLoop);
}

TEST_F(GpuFusibleHeroTest, FusionKindForComputation) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
k_reduce {
  a = f32[64,128] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(a, z), dimensions={1}, to_apply=add
  ROOT n = f32[64] negate(r)
}
k_small_reduce {
  a = f32[16,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(a, z), dimensions={0}, to_apply=add
}
k_reduce_mof {
  a = f32[64,128] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(a, z), dimensions={1}, to_apply=add
  e = f32[64,128] exponential(a)
  ROOT t = (f32[64], f32[64,128]) tuple(r, e)
}
k_reduce_bad_mof {
  a = f32[64,128] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(a, z), dimensions={1}, to_apply=add
  c = f32[128] reduce(a, z), dimensions={0}, to_apply=add
  ROOT t = (f32[64], f32[128]) tuple(r, c)
}
k_transpose {
  a = f32[64,64] parameter(0)
  t = f32[64,64] transpose(a), dimensions={1,0}
  ROOT n = f32[64,64] negate(t)
}
k_scatter {
  o = f32[100,8] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5,8] parameter(2)
  ROOT s = f32[100,8] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
k_concat3 {
  a = f32[4] parameter(0)
  ROOT c = f32[12] concatenate(a, a, a), dimensions={0}
}
k_concat5 {
  a = f32[4] parameter(0)
  ROOT c = f32[20] concatenate(a, a, a, a, a), dimensions={0}
}
k_slices {
  a = f32[16] parameter(0)
  sa = f32[8] slice(a), slice={[0:8]}
  sb = f32[8] slice(a), slice={[8:16]}
  ROOT t = (f32[8], f32[8]) tuple(sa, sb)
}
k_strided_slices {
  a = f32[16] parameter(0)
  sa = f32[8] slice(a), slice={[0:16:2]}
  sb = f32[8] slice(a), slice={[8:16]}
  ROOT t = (f32[8], f32[8]) tuple(sa, sb)
}
k_loop {
  a = f32[16] parameter(0)
  ROOT e = f32[16] exponential(a)
}
k_subbyte {
  a = s4[64,128] parameter(0)
  c = f32[64,128] convert(a)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(c, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[64,128] parameter(0)
  q = f32[16,4] parameter(1)
  w = f32[64,64] parameter(2)
  o = f32[100,8] parameter(3)
  i = s32[5,1] parameter(4)
  u = f32[5,8] parameter(5)
  v = f32[4] parameter(6)
  x = f32[16] parameter(7)
  s4p = s4[64,128] parameter(8)
  f1 = f32[64] fusion(p), kind=kLoop, calls=k_reduce
  f2 = f32[4] fusion(q), kind=kLoop, calls=k_small_reduce
  f3 = (f32[64], f32[64,128]) fusion(p), kind=kLoop, calls=k_reduce_mof
  f4 = (f32[64], f32[128]) fusion(p), kind=kLoop, calls=k_reduce_bad_mof
  f5 = f32[64,64] fusion(w), kind=kLoop, calls=k_transpose
  f6 = f32[100,8] fusion(o, i, u), kind=kLoop, calls=k_scatter
  f7 = f32[12] fusion(v), kind=kLoop, calls=k_concat3
  f8 = f32[20] fusion(v), kind=kLoop, calls=k_concat5
  f9 = (f32[8], f32[8]) fusion(x), kind=kLoop, calls=k_slices
  f10 = (f32[8], f32[8]) fusion(x), kind=kLoop, calls=k_strided_slices
  f11 = f32[16] fusion(x), kind=kLoop, calls=k_loop
  f12 = f32[64] fusion(s4p), kind=kLoop, calls=k_subbyte
  ROOT t = (f32[64], f32[4]) tuple(f1, f2)
}
)"));
  EXPECT_EQ(FusionKindForComputation(Fused("f1")), FusionKind::kInput);
  EXPECT_EQ(FusionKindForComputation(Fused("f2")), FusionKind::kLoop);
  EXPECT_EQ(FusionKindForComputation(Fused("f3")), FusionKind::kInput);
  // Row and column heroes cannot share a reduction kernel; two roots that
  // are not slices give the loop emitter.
  EXPECT_EQ(FusionKindForComputation(Fused("f4")), FusionKind::kLoop);
  EXPECT_EQ(FusionKindForComputation(Fused("f5")), FusionKind::kInput);
  EXPECT_EQ(FusionKindForComputation(Fused("f6")), FusionKind::kInput);
  EXPECT_EQ(FusionKindForComputation(Fused("f7")), FusionKind::kInput);
  EXPECT_EQ(FusionKindForComputation(Fused("f8")), FusionKind::kLoop);
  EXPECT_EQ(FusionKindForComputation(Fused("f9")), FusionKind::kInput);
  EXPECT_EQ(FusionKindForComputation(Fused("f10")), FusionKind::kLoop);
  EXPECT_EQ(FusionKindForComputation(Fused("f11")), FusionKind::kLoop);
  // A sub-byte input forces the loop emitter even under a reduction.
  EXPECT_EQ(FusionKindForComputation(Fused("f12")), FusionKind::kLoop);
}

// ---------------------------------------------------------------------------
// IsExpensive.

class GpuFusibleExpensiveTest : public GpuFusibleTest {};

TEST_F(GpuFusibleExpensiveTest, GpuAndGenericLists) {
  PARSE(R"(HloModule m
fused {
  fp = f32[4] parameter(0)
  ROOT fn = f32[4] negate(fp)
}
ENTRY e {
  f = f32[4] parameter(0)
  d = f64[4] parameter(1)
  h = f16[4] parameter(2)
  i = s32[4] parameter(3)
  c = c64[4] parameter(4)
  m = f32[4,4] parameter(5)
  exp32 = f32[4] exponential(f)
  exp64 = f64[4] exponential(d)
  div32 = f32[4] divide(f, f)
  div64 = f64[4] divide(d, d)
  sqrt16 = f16[4] sqrt(h)
  rsqrt64 = f64[4] rsqrt(d)
  log32 = f32[4] log(f)
  tanh32 = f32[4] tanh(f)
  add32 = f32[4] add(f, f)
  pr = pred[4] compare(f, f), direction=LT
  sel = f32[4] select(pr, f, f)
  sin32 = f32[4] sine(f)
  sin64c = c64[4] sine(c)
  abs32 = f32[4] abs(f)
  absc = f32[4] abs(c)
  k = s32[] constant(3)
  bk = s32[4] broadcast(k), dimensions={}
  idivc = s32[4] divide(i, bk)
  iremc = s32[4] remainder(i, bk)
  idiv = s32[4] divide(i, i)
  dot = f32[4,4] dot(m, m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  fus = f32[4] fusion(f), kind=kLoop, calls=fused
  tr = f32[4,4] transpose(m), dimensions={1,0}
  ROOT t = (f32[4]) tuple(exp32)
}
)");
  // GPU: exp, divide, sqrt, rsqrt are cheap for F32/F16 only.
  EXPECT_FALSE(IsExpensive(I("exp32")));
  EXPECT_TRUE(IsExpensive(I("exp64")));
  EXPECT_FALSE(IsExpensive(I("div32")));
  EXPECT_TRUE(IsExpensive(I("div64")));
  EXPECT_FALSE(IsExpensive(I("sqrt16")));
  EXPECT_TRUE(IsExpensive(I("rsqrt64")));
  EXPECT_TRUE(IsExpensive(I("log32")));
  EXPECT_TRUE(IsExpensive(I("tanh32")));
  for (std::string_view cheap : {"add32", "sel", "pr", "bk", "k", "tr", "t"}) {
    EXPECT_FALSE(IsExpensive(I(cheap))) << cheap;
  }
  // Trigonometry and abs: expensive only for complex values.
  EXPECT_FALSE(IsExpensive(I("sin32")));
  EXPECT_TRUE(IsExpensive(I("sin64c")));
  EXPECT_FALSE(IsExpensive(I("abs32")));
  EXPECT_FALSE(IsExpensive(I("absc")));  // result is real
  // Integer division by a (broadcast) scalar constant is cheap.
  EXPECT_FALSE(IsExpensive(I("idivc")));
  EXPECT_FALSE(IsExpensive(I("iremc")));
  EXPECT_TRUE(IsExpensive(I("idiv")));
  EXPECT_TRUE(IsExpensive(I("dot")));
  EXPECT_TRUE(IsExpensive(I("fus")));
}

// ---------------------------------------------------------------------------
// Budgets.

// A fusion `name` of `count` parameters (entry parameters x<first>...)
// adding them all up; its fused computation is `name`_comp.
std::string AddAllFusion(std::string_view name, int first, int count,
                         std::string* computations) {
  std::string comp = StrCat(name, "_comp {\n");
  for (int i = 0; i < count; ++i) {
    StrAppend(&comp, "  q", i, " = f32[4] parameter(", i, ")\n");
  }
  std::string last = "q0";
  for (int i = 1; i < count; ++i) {
    const std::string next = StrCat("acc", i);
    StrAppend(&comp, "  ", i + 1 == count ? "ROOT " : "", next,
              " = f32[4] add(", last, ", q", i, ")\n");
    last = next;
  }
  StrAppend(&comp, "}\n");
  StrAppend(computations, comp);
  std::string inst = StrCat("  ", name, " = f32[4] fusion(");
  for (int i = 0; i < count; ++i) {
    StrAppend(&inst, i ? ", " : "", "x", first + i);
  }
  StrAppend(&inst, "), kind=kLoop, calls=", name, "_comp\n");
  return inst;
}

class GpuFusibleBudgetTest : public GpuFusibleTest {};

TEST_F(GpuFusibleBudgetTest, OperandsAndOutputs) {
  std::string comps;
  std::string body;
  for (int i = 0; i < 100; ++i) {
    StrAppend(&body, "  x", i, " = f32[4] parameter(", i, ")\n");
  }
  StrAppend(&body, AddAllFusion("f60", 0, 60, &comps));
  StrAppend(&body, AddAllFusion("f40", 60, 40, &comps));
  StrAppend(&body, AddAllFusion("f40s", 0, 40, &comps));
  StrAppend(&body, AddAllFusion("f30", 0, 30, &comps));
  StrAppend(&body, AddAllFusion("f2", 0, 2, &comps));
  // A consumer with 96 operands, one of which is f2.
  std::string big = "big_comp {\n";
  for (int i = 0; i < 96; ++i) {
    StrAppend(&big, "  q", i, " = f32[4] parameter(", i, ")\n");
  }
  StrAppend(&big, "  ROOT r = f32[4] add(q0, q95)\n}\n");
  StrAppend(&comps, big);
  StrAppend(&body, "  big = f32[4] fusion(");
  for (int i = 0; i < 95; ++i) StrAppend(&body, "x", i, ", ");
  StrAppend(&body, "f2), kind=kLoop, calls=big_comp\n");
  StrAppend(&body,
            "  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4]) "
            "tuple(f60, f40, f40s, f30, big)\n");
  PARSE(StrCat("HloModule m\n", comps, "ENTRY e {\n", body, "}\n"));

  // 60 + 40 distinct operands + 2 outputs > 96.
  FusionDecision d = FusionFitsInBudget(I("f60"), I("f40"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("102"), std::string::npos) << d.reason;
  // Sharing 40 operands: the exact count is 60 + 2.
  EXPECT_TRUE(FusionFitsInBudget(I("f60"), I("f40s")));
  // The quick bound is enough: 60 + 30 - 1 + 2 <= 96.
  EXPECT_TRUE(FusionFitsInBudget(I("f60"), I("f30")));
  // 95 unique operands + 2 outputs > 96 for siblings, but a producer-
  // consumer fusion that does not grow the consumer's operand list (96)
  // is accepted.
  EXPECT_FALSE(FusionFitsInBudget(I("big"), I("f2")));
  EXPECT_TRUE(FusionFitsInBudget(I("big"), I("f2"),
                                 /*is_consumer_producer_fusion=*/true));
  EXPECT_FALSE(FusionFitsInBudget(I("big"), I("f40"), true));
}

// A fusion `name` reading entry parameter `param` with `n` reductions of
// kind `dims` (tuple root when n > 1).
std::string ReductionsFusion(std::string_view name, int n,
                             std::string_view dims, std::string_view out,
                             std::string* computations) {
  std::string comp = StrCat(name, "_comp {\n  a = f32[64,128] parameter(0)\n",
                            "  z = f32[] constant(0)\n");
  std::string tuple_shape = "(";
  std::string tuple_ops;
  for (int i = 0; i < n; ++i) {
    StrAppend(&comp, "  r", i, " = ", out, " reduce(a, z), dimensions={", dims,
              "}, to_apply=add\n");
    StrAppend(&tuple_shape, i ? ", " : "", out);
    StrAppend(&tuple_ops, i ? ", " : "", "r", i);
  }
  StrAppend(&tuple_shape, ")");
  if (n > 1) {
    StrAppend(&comp, "  ROOT t = ", tuple_shape, " tuple(", tuple_ops, ")\n");
  } else {
    // Re-emit the single reduce as the root.
    comp = StrCat(name, "_comp {\n  a = f32[64,128] parameter(0)\n",
                  "  z = f32[] constant(0)\n  ROOT r0 = ", out,
                  " reduce(a, z), dimensions={", dims, "}, to_apply=add\n");
    tuple_shape = std::string(out);
  }
  StrAppend(&comp, "}\n");
  StrAppend(computations, comp);
  return StrCat("  ", name, " = ", tuple_shape, " fusion(p), kind=kInput, ",
                "calls=", name, "_comp\n");
}

TEST_F(GpuFusibleBudgetTest, SharedMemoryAndReductions) {
  std::string comps(kAdd);
  std::string body =
      "  p = f32[64,128] parameter(0)\n  z = f32[] constant(0)\n";
  StrAppend(&body, ReductionsFusion("row5", 5, "1", "f32[64]", &comps));
  StrAppend(&body, ReductionsFusion("row4", 4, "1", "f32[64]", &comps));
  StrAppend(&body, ReductionsFusion("col2", 2, "0", "f32[128]", &comps));
  StrAppend(&body, ReductionsFusion("col1", 1, "0", "f32[128]", &comps));
  StrAppend(&body,
            "  row = f32[64] reduce(p, z), dimensions={1}, to_apply=add\n"
            "  col = f32[128] reduce(p, z), dimensions={0}, to_apply=add\n"
            "  ROOT t = (f32[64], f32[128]) tuple(row, col)\n");
  PARSE(StrCat("HloModule m\n", comps, "ENTRY e {\n", body, "}\n"));

  // Row reduction: one f32 per warp lane.
  EXPECT_EQ(SharedMemoryUsage(I("row")), 32 * 4);
  // Column reduction: 32 x (4 * 32 + 1) f32.
  EXPECT_EQ(SharedMemoryUsage(I("col")), 32 * (4 * 32 + 1) * 4);
  EXPECT_EQ(SharedMemoryUsage(I("col2")), 2 * 32 * (4 * 32 + 1) * 4);
  EXPECT_EQ(SharedMemoryUsage(I("row5")), 5 * 32 * 4);
  EXPECT_EQ(SharedMemoryUsage(I("p")), 0);
  // 3 column tiles = 49536 bytes > 48 KiB; 2 plus a row reduction fit.
  FusionDecision d = FusionFitsInBudget(I("col2"), I("col1"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("shared memory"), std::string::npos) << d.reason;
  EXPECT_TRUE(FusionFitsInBudget(I("col2"), I("row")));

  // 5 + 4 unnested reductions > 8; 4 + 4 fit.
  EXPECT_EQ(CountUnnestedReductions(I("row5")), 5);
  d = FusionFitsInBudget(I("row5"), I("row4"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("unnested reductions"), std::string::npos)
      << d.reason;
  EXPECT_TRUE(FusionFitsInBudget(I("row4"), I("row4")));
  EXPECT_TRUE(FusionFitsInBudget(I("row4"), I("row")));
  EXPECT_FALSE(FusionFitsInBudget(I("row4"), I("row5")));
}

TEST_F(GpuFusibleBudgetTest, MergedTooLarge) {
  std::string comp = "chain {\n  v0 = f32[4] parameter(0)\n";
  for (int i = 1; i <= 999; ++i) {
    StrAppend(&comp, i == 999 ? "  ROOT " : "  ", "v", i, " = f32[4] negate(v",
              i - 1, ")\n");
  }
  StrAppend(&comp, "}\n");
  PARSE(StrCat("HloModule m\n", comp, R"(
small {
  y0 = f32[4] parameter(0)
  y1 = f32[4] exponential(y0)
  ROOT y2 = f32[4] negate(y1)
}
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  big = f32[4] fusion(n), kind=kLoop, calls=chain
  sm = f32[4] fusion(big), kind=kLoop, calls=small
  a = f32[4] abs(big)
  ROOT t = (f32[4], f32[4]) tuple(sm, a)
}
)"));
  // 999 fused ops + 1 = 1000: at the limit.
  EXPECT_TRUE(ProducerConsumerMergedTooLarge(I("n"), I("big")));
  EXPECT_TRUE(ProducerConsumerMergedTooLarge(I("big"), I("a")));
  // 999 + 2 > 1000.
  FusionDecision d = ProducerConsumerMergedTooLarge(I("big"), I("sm"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("1001"), std::string::npos) << d.reason;
}

// ---------------------------------------------------------------------------
// CreatesHeavyComputation.

class GpuFusibleHeavyTest : public GpuFusibleTest {};

TEST_F(GpuFusibleHeavyTest, ExpensiveProducerIntoReusingConsumer) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_bcast {
  bp = f32[49] parameter(0)
  be = f32[49] exponential(bp)
  ROOT bb = f32[49,8] broadcast(be), dimensions={0}
}
fused_bcast2 {
  cp = f32[49] parameter(0)
  ce = f32[49] exponential(cp)
  ROOT cb = f32[49,8] broadcast(ce), dimensions={0}
}
fused_map {
  mp = f32[49] parameter(0)
  ROOT mn = f32[49] negate(mp)
}
fused_rw {
  rp = f32[64] parameter(0)
  rz = f32[] constant(0)
  ROOT rr = f32[49] reduce-window(rp, rz), window={size=16}, to_apply=add
}
ENTRY e {
  p = f32[64] parameter(0)
  z = f32[] constant(0)
  rw16 = f32[49] reduce-window(p, z), window={size=16}, to_apply=add
  rw4 = f32[61] reduce-window(p, z), window={size=4}, to_apply=add
  b16 = f32[49,8] broadcast(rw16), dimensions={0}
  b16same = f32[49,1] broadcast(rw16), dimensions={0}
  n16 = f32[49] negate(rw16)
  b4 = f32[61,8] broadcast(rw4), dimensions={0}
  rw16b = f32[48] reduce-window(rw16, z), window={size=2}, to_apply=add
  rw16s = f32[24] reduce-window(rw16, z), window={size=2 stride=2}, to_apply=add
  fb = f32[49,8] fusion(rw16), kind=kLoop, calls=fused_bcast
  fm = f32[49] fusion(rw16), kind=kLoop, calls=fused_map
  frw = f32[49] fusion(p), kind=kLoop, calls=fused_rw
  fb2 = f32[49,8] fusion(frw), kind=kLoop, calls=fused_bcast2
  q = f32[30,2] parameter(1)
  smallred = f32[2] reduce(q, z), dimensions={0}, to_apply=add
  bs = f32[2,8] broadcast(smallred), dimensions={0}
  r = f32[64,128] parameter(2)
  rowred = f32[64] reduce(r, z), dimensions={1}, to_apply=add
  br = f32[64,8] broadcast(rowred), dimensions={0}
  ROOT t = (f32[49,8], f32[49]) tuple(b16, n16)
}
)"));
  // A 16-element window feeding a broadcast that expands it.
  EXPECT_TRUE(CreatesHeavyComputation(I("rw16"), I("b16")));
  // Consumers that read each element once.
  EXPECT_FALSE(CreatesHeavyComputation(I("rw16"), I("n16")));
  EXPECT_FALSE(CreatesHeavyComputation(I("rw16"), I("b16same")));
  EXPECT_FALSE(CreatesHeavyComputation(I("rw16"), I("rw16s")));
  // Overlapping windows read elements twice.
  EXPECT_TRUE(CreatesHeavyComputation(I("rw16"), I("rw16b")));
  // A 4-element window is cheap to repeat.
  EXPECT_FALSE(CreatesHeavyComputation(I("rw4"), I("b4")));
  // Inside a consumer fusion, the broadcast under the exponential counts.
  EXPECT_TRUE(CreatesHeavyComputation(I("rw16"), I("fb")));
  EXPECT_FALSE(CreatesHeavyComputation(I("rw16"), I("fm")));
  // A producer fusion containing the window.
  EXPECT_TRUE(CreatesHeavyComputation(I("frw"), I("fb2")));
  // A small (elemental) reduce with 15 inputs per output is heavy; a real
  // row reduction is not.
  EXPECT_TRUE(CreatesHeavyComputation(I("smallred"), I("bs")));
  EXPECT_FALSE(CreatesHeavyComputation(I("rowred"), I("br")));
}

// ---------------------------------------------------------------------------
// Producer-consumer legality.

class GpuFusibleLegalityTest : public GpuFusibleTest {};

TEST_F(GpuFusibleLegalityTest, ScatterLegality) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_scatter {
  so = f32[100,8] parameter(0)
  si = s32[5,1] parameter(1)
  su = f32[5,8] parameter(2)
  ROOT ss = f32[100,8] scatter(so, si, su), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
ENTRY e {
  o = f32[100,8] parameter(0)
  i = s32[5,1] parameter(1)
  u = f32[5,8] parameter(2)
  no = f32[100,8] negate(o)
  nu = f32[5,8] negate(u)
  rd = f32[5,8] slice(o), slice={[0:5], [0:8]}
  s = f32[100,8] scatter(no, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sc2 = f32[100,8] scatter(o, i, nu), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  sc3 = f32[100,8] scatter(o, i, rd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  after = f32[100,8] negate(s)
  fs = f32[100,8] fusion(no, i, nu), kind=kInput, calls=fused_scatter
  ROOT t = (f32[100,8], f32[100,8], f32[100,8], f32[100,8]) tuple(after, sc2, sc3, fs)
}
)"));
  // Never into the scatter's in-place operand.
  FusionDecision d = CheckScatterLegality(I("no"), I("s"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("in-place"), std::string::npos) << d.reason;
  EXPECT_FALSE(IsProducerConsumerFusible(I("no"), I("s")));
  // The updates may fuse.
  EXPECT_TRUE(CheckScatterLegality(I("nu"), I("sc2")));
  EXPECT_TRUE(IsProducerConsumerFusible(I("nu"), I("sc2")));
  // Nor a producer that reads the in-place operand.
  EXPECT_FALSE(CheckScatterLegality(I("rd"), I("sc3")));
  // Never into the output of a scatter.
  d = CheckScatterLegality(I("s"), I("after"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("output of scatter"), std::string::npos);
  // Fused scatter: the in-place operand is the one behind parameter 0.
  EXPECT_FALSE(CheckScatterLegality(I("no"), I("fs")));
  EXPECT_TRUE(CheckScatterLegality(I("nu"), I("fs")));
  // Non-scatter pairs are unaffected.
  EXPECT_TRUE(CheckScatterLegality(I("o"), I("no")));
}

TEST_F(GpuFusibleLegalityTest, InPlacePairs) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_dus {
  d0 = f32[8] parameter(0)
  d1 = f32[2] parameter(1)
  d2 = s32[] parameter(2)
  ROOT du = f32[8] dynamic-update-slice(d0, d1, d2)
}
fused_mof_dus {
  e0 = f32[8] parameter(0)
  e1 = f32[2] parameter(1)
  e2 = s32[] parameter(2)
  e3 = f32[8] parameter(3)
  en = f32[8] negate(e3)
  eu = f32[8] dynamic-update-slice(e0, e1, e2)
  eb = f32[2,4] bitcast(eu)
  ROOT et = (f32[8], f32[2,4]) tuple(en, eb)
}
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[2] parameter(1)
  i = s32[] parameter(2)
  dus = f32[8] dynamic-update-slice(p0, p1, i)
  fd = f32[8] fusion(p0, p1, i), kind=kLoop, calls=fused_dus
  fm = (f32[8], f32[2,4]) fusion(p0, p1, i, p0), kind=kLoop, calls=fused_mof_dus
  n = f32[8] negate(p0)
  ROOT t = (f32[8], f32[8]) tuple(dus, n)
}
)"));
  using Pairs = std::vector<std::pair<int64_t, ShapeIndex>>;
  EXPECT_EQ(InPlaceInputOutputPairs(I("dus")), (Pairs{{0, {}}}));
  EXPECT_EQ(InPlaceInputOutputPairs(I("fd")), (Pairs{{0, {}}}));
  EXPECT_EQ(InPlaceInputOutputPairs(I("fm")), Pairs{});  // bitcast root
  EXPECT_EQ(InPlaceInputOutputPairs(I("n")), Pairs{});
}

TEST_F(GpuFusibleLegalityTest, InPlaceDynamicUpdateSlice) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_reads_buffer {
  a0 = f32[8] parameter(0)
  a1 = s32[] parameter(1)
  as = f32[2] slice(a0), slice={[0:2]}
  an = f32[2] negate(as)
  ROOT au = f32[8] dynamic-update-slice(a0, an, a1)
}
fused_plain {
  b0 = f32[8] parameter(0)
  b1 = f32[2] parameter(1)
  b2 = s32[] parameter(2)
  bn = f32[2] negate(b1)
  ROOT bu = f32[8] dynamic-update-slice(b0, bn, b2)
}
fused_two_dus {
  k0 = f32[8] parameter(0)
  k1 = f32[2] parameter(1)
  k2 = s32[] parameter(2)
  ku = f32[8] dynamic-update-slice(k0, k1, k2)
  ROOT kv = f32[8] dynamic-update-slice(ku, k1, k2)
}
fused_plain2 {
  m0 = f32[8] parameter(0)
  m1 = f32[2] parameter(1)
  m2 = s32[] parameter(2)
  mn = f32[2] negate(m1)
  ROOT mu = f32[8] dynamic-update-slice(m0, mn, m2)
}
fused_slice_reverse {
  r0 = f32[8] parameter(0)
  rs = f32[2] slice(r0), slice={[0:2]}
  ROOT rr = f32[2] reverse(rs), dimensions={0}
}
ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[2] parameter(1)
  i = s32[] parameter(2)
  c0 = s32[] constant(0)
  c1 = s32[] constant(1)
  s = f32[2] slice(p0), slice={[0:2]}
  dusA = f32[8] dynamic-update-slice(p0, s, c0)
  dusB = f32[8] dynamic-update-slice(p0, s, c1)
  dusC = f32[8] dynamic-update-slice(p0, s, i)
  st = f32[2] slice(p0), slice={[0:4:2]}
  dusD = f32[8] dynamic-update-slice(p0, st, c0)
  n = f32[8] negate(p0)
  dusE = f32[8] dynamic-update-slice(n, p1, i)
  ds = f32[2] dynamic-slice(p0, i), dynamic_slice_sizes={2}
  dusF = f32[8] dynamic-update-slice(p0, ds, i)
  ds1 = f32[2] dynamic-slice(p0, c1), dynamic_slice_sizes={2}
  dusG = f32[8] dynamic-update-slice(p0, ds1, i)
  dusH = f32[8] dynamic-update-slice(n, n, c0)
  np1 = f32[2] negate(p1)
  dusI = f32[8] dynamic-update-slice(p0, np1, i)
  fJ = f32[8] fusion(n, i), kind=kLoop, calls=fused_reads_buffer
  fK = f32[8] fusion(n, p1, i), kind=kLoop, calls=fused_plain
  fL = f32[8] fusion(p0, s, c0), kind=kLoop, calls=fused_two_dus
  fM = f32[8] fusion(p0, s, c0), kind=kLoop, calls=fused_plain2
  fsr = f32[2] fusion(p0), kind=kLoop, calls=fused_slice_reverse
  dusN = f32[8] dynamic-update-slice(p0, fsr, c0)
  ROOT t = (f32[8], f32[8], f32[8]) tuple(dusA, dusB, dusC)
}
)"));
  // Slice of the buffer at the constant DUS offset: allowed.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("s"), I("dusA")));
  // Offset 1 vs slice start 0, or a non-constant offset: forbidden.
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("s"), I("dusB")));
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("s"), I("dusC")));
  // Strided slices never match.
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("st"), I("dusD")));
  // An elementwise producer that is the buffer: allowed.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("n"), I("dusE")));
  // Dynamic-slice with the same index value: allowed; other index: not.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("ds"), I("dusF")));
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("ds1"), I("dusG")));
  // The consumer reads the in-place buffer through a second operand.
  FusionDecision d = ShouldFuseInPlaceOp(I("n"), I("dusH"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("another operand"), std::string::npos) << d.reason;
  // A producer that does not touch the buffer.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("np1"), I("dusI")));
  // Consumer fusion that slices its in-place parameter: an elementwise
  // producer of the buffer would race with the slice.
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("n"), I("fJ")));
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("n"), I("fK")));
  // Two dynamic-update-slices in the consumer.
  d = ShouldFuseInPlaceOp(I("s"), I("fL"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("several dynamic-update-slices"), std::string::npos)
      << d.reason;
  // Matching slice into a fused DUS whose offset is a constant outside.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("s"), I("fM")));
  // A producer fusion with two non-elementwise ops on the buffer.
  EXPECT_FALSE(ShouldFuseInPlaceOp(I("fsr"), I("dusN")));
  // IsProducerConsumerFusible ends with this check.
  EXPECT_TRUE(IsProducerConsumerFusible(I("s"), I("dusA")));
  EXPECT_FALSE(IsProducerConsumerFusible(I("s"), I("dusB")));
  // Non in-place consumers have nothing to check.
  EXPECT_TRUE(ShouldFuseInPlaceOp(I("p0"), I("n")));
}

TEST_F(GpuFusibleLegalityTest, ProducerConsumerFusible) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_neg {
  f0 = f32[64] parameter(0)
  ROOT fn = f32[64] negate(f0)
}
fused_add {
  g0 = f32[64] parameter(0)
  g1 = f32[64] parameter(1)
  ROOT ga = f32[64] add(g0, g1)
}
fused_mof {
  h0 = f32[64] parameter(0)
  hn = f32[64] negate(h0)
  he = f32[64] exponential(h0)
  ROOT ht = (f32[64], f32[64]) tuple(hn, he)
}
fused_const {
  k0 = f32[4] parameter(0)
  ROOT kn = f32[4] negate(k0)
}
fused_scalar {
  q0 = f32[64] parameter(0)
  ROOT qn = f32[64] negate(q0)
}
ENTRY e {
  p = f32[64,128] parameter(0)
  v = f32[64] parameter(1)
  w = f32[64,64] parameter(2)
  v4 = f32[4] parameter(3)
  z = f32[] constant(0)
  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  rn = f32[64] negate(r)
  r2 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  r2a = f32[64] add(r2, v)
  r3 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  r3n = f32[64] negate(r3)
  r3e = f32[64] exponential(r3)
  r4 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  f4 = f32[64] fusion(r4), kind=kLoop, calls=fused_neg
  r5 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  f5 = f32[64] fusion(r5, v), kind=kLoop, calls=fused_add
  e = f32[64] exponential(v)
  a = f32[64] add(e, v)
  bc = f32[64] bitcast(e)
  c = f32[4] constant({1, 2, 3, 4})
  ca = f32[4] add(c, v4)
  fc = f32[4] fusion(c), kind=kLoop, calls=fused_const
  sc = f32[] constant(2)
  bsc = f32[64] broadcast(sc), dimensions={}
  fsc = f32[64] fusion(bsc), kind=kLoop, calls=fused_scalar
  r6 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  r6n = f32[64] negate(r6)
  r6a = f32[64] abs(r6n)
  r6e = f32[64] exponential(r6n)
  rs = f32[8,8] reshape(r6e)
  tw = f32[64,64] transpose(w), dimensions={1,0}
  aw = f32[64,64] add(w, w)
  cpy = f32[64,64]{0,1} copy(w)
  cpn = f32[64,64]{0,1} negate(cpy)
  mof = (f32[64], f32[64]) fusion(v), kind=kLoop, calls=fused_mof
  d = f32[64,64] dot(w, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dn = f32[64,64] negate(d)
  ROOT t = (f32[64], f32[64]) tuple(rn, r2a)
}
)"));
  EXPECT_TRUE(IsProducerConsumerFusible(I("e"), I("a")));
  // A bitcast consumer is not worth fusing into.
  EXPECT_FALSE(IsProducerConsumerFusible(I("e"), I("bc")));
  // Reduction epilogues: single intermediate ops, single user.
  EXPECT_TRUE(IsProducerConsumerFusible(I("r"), I("rn")));
  FusionDecision d = IsProducerConsumerFusible(I("r2"), I("r2a"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("epilogue"), std::string::npos) << d.reason;
  d = IsProducerConsumerFusible(I("r3"), I("r3n"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("single user"), std::string::npos) << d.reason;
  EXPECT_TRUE(IsProducerConsumerFusible(I("r4"), I("f4")));
  EXPECT_FALSE(IsProducerConsumerFusible(I("r5"), I("f5")));
  // Constants: only effective scalars, only into fusions.
  EXPECT_FALSE(IsProducerConsumerFusible(I("c"), I("ca")));
  d = IsProducerConsumerFusible(I("c"), I("fc"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("constant"), std::string::npos) << d.reason;
  EXPECT_FALSE(IsProducerConsumerFusible(I("sc"), I("bsc")));
  EXPECT_TRUE(IsProducerConsumerFusible(I("bsc"), I("fsc")));
  // A tiled-transpose copy is not loop-fusible but may be a producer.
  EXPECT_FALSE(IsLoopFusibleAsProducer(I("cpy")));
  EXPECT_TRUE(IsProducerConsumerFusible(I("cpy"), I("cpn")));
  // Multi-output fusion producers and dot producers are not fusible.
  d = IsProducerConsumerFusible(I("mof"), I("a"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("multi-output"), std::string::npos) << d.reason;
  // Users of an unfused epilogue op stay outside the fusion.
  EXPECT_TRUE(IsProducerConsumerFusible(I("r6"), I("r6n")));
  // Intermediate ops: one user, bitcast-like or elementwise.
  EXPECT_FALSE(IsIntermediate(I("r6n")));
  EXPECT_TRUE(IsIntermediate(I("r6a")));
  EXPECT_TRUE(IsIntermediate(I("rs")));
  EXPECT_FALSE(IsIntermediate(I("tw")));
  EXPECT_FALSE(IsIntermediate(I("aw")));
  EXPECT_TRUE(IsIntermediate(I("aw"), 2));
  EXPECT_FALSE(IsIntermediate(I("cpy")));
  d = IsProducerConsumerFusible(I("d"), I("dn"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("producer is not loop-fusible"), std::string::npos);
}

// ---------------------------------------------------------------------------
// Multi-output fusion.

class GpuFusibleMofTest : public GpuFusibleTest {};

TEST_F(GpuFusibleMofTest, ShapesCompatible) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_row {
  a = f32[64,128] parameter(0)
  z = f32[] constant(0)
  r = f32[64] reduce(a, z), dimensions={1}, to_apply=add
  ROOT n = f32[64] negate(r)
}
fused_col {
  a = f32[64,128] parameter(0)
  z = f32[] constant(0)
  ROOT rc = f32[128] reduce(a, z), dimensions={0}, to_apply=add
}
fused_tr {
  a = f32[64,64] parameter(0)
  ROOT t = f32[64,64] transpose(a), dimensions={1,0}
}
fused_after_tr {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  s = f32[64,64] add(a, b)
  ROOT ns = f32[64,64] negate(s)
}
fused_after_tr_unary {
  a = f32[64,64] parameter(0)
  ROOT s = f32[64,64] negate(a)
}
ENTRY e {
  p = f32[64,128] parameter(0)
  q = f32[64,64] parameter(1)
  z = f32[] constant(0)
  r1 = f32[64] reduce(p, z), dimensions={1}, to_apply=add
  ep = f32[64,128] exponential(p)
  r2 = f32[64] reduce(ep, z), dimensions={1}, to_apply=add
  c1 = f32[128] reduce(p, z), dimensions={0}, to_apply=add
  np = f32[64,128] negate(p)
  ip = s32[64,128] convert(p)
  rs = f32[8192] reshape(p)
  nrs = f32[8192] negate(rs)
  nq = f32[64,64] negate(q)
  tq = f32[64,64] transpose(q), dimensions={1,0}
  tp = f32[128,64] transpose(p), dimensions={1,0}
  frow = f32[64] fusion(p), kind=kInput, calls=fused_row
  fcol = f32[128] fusion(p), kind=kInput, calls=fused_col
  ftr = f32[64,64] fusion(q), kind=kInput, calls=fused_tr
  fafter = f32[64,64] fusion(ftr, q), kind=kLoop, calls=fused_after_tr
  funary = f32[64,64] fusion(ftr), kind=kLoop, calls=fused_after_tr_unary
  ROOT t = (f32[64], f32[64]) tuple(r1, r2)
}
)"));
  // Two row reductions of the same shape share a kernel.
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("r1"), I("r2")));
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("r1"), I("frow")));
  // Row vs column: different reduction kinds.
  FusionDecision d = ShapesCompatibleForMultiOutputFusion(I("r1"), I("c1"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("reductions with different shapes"),
            std::string::npos)
      << d.reason;
  EXPECT_FALSE(ShapesCompatibleForMultiOutputFusion(I("frow"), I("fcol")));
  // Elementwise ops over the reduction's input shape (any element type or
  // a bitcast reshape of it) share its loop.
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("r1"), I("np")));
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("r1"), I("ip")));
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("nrs"), I("r1")));
  d = ShapesCompatibleForMultiOutputFusion(I("r1"), I("nq"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("loop shapes"), std::string::npos) << d.reason;
  // No transpose with a reduction.
  EXPECT_FALSE(ShapesCompatibleForMultiOutputFusion(I("r1"), I("tp")));
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("tq"), I("ftr")));
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("tq"), I("nq")));
  // The tiled transpose must stay tiled in its consumer fusion.
  d = ShapesCompatibleForMultiOutputFusion(I("ftr"), I("fafter"));
  EXPECT_FALSE(d);
  EXPECT_NE(d.reason.find("untiled"), std::string::npos) << d.reason;
  EXPECT_TRUE(ShapesCompatibleForMultiOutputFusion(I("ftr"), I("funary")));
  EXPECT_EQ(&GetRealHeroForMultiOutputFusion(I("frow")), &I("r"));
  EXPECT_EQ(&GetRealHeroForMultiOutputFusion(I("np")), &I("np"));
}

TEST_F(GpuFusibleMofTest, RootAndProducerEligibility) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused_loop {
  la = f32[8] parameter(0)
  ROOT ln = f32[8] negate(la)
}
fused_custom {
  ca = f32[8] parameter(0)
  ROOT cn = f32[8] negate(ca)
}
fused_mof {
  ma = f32[8] parameter(0)
  mn = f32[8] negate(ma)
  ROOT mt = (f32[8], f32[8]) tuple(mn, ma)
}
fused_dus {
  da = f32[8] parameter(0)
  db = f32[2] parameter(1)
  di = s32[] parameter(2)
  ROOT du = f32[8] dynamic-update-slice(da, db, di)
}
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  m = f32[64,128] parameter(3)
  w = f32[64,64] parameter(4)
  o = f32[100,8] parameter(5)
  si = s32[5,1] parameter(6)
  su = f32[5,8] parameter(7)
  z = f32[] constant(0)
  n = f32[8] negate(p)
  b = f32[8,4] broadcast(p), dimensions={0}
  r = f32[64] reduce(m, z), dimensions={1}, to_apply=add
  tr = f32[64,64] transpose(w), dimensions={1,0}
  cp = f32[8] copy(p)
  lf = f32[8] fusion(p), kind=kLoop, calls=fused_loop
  cf = f32[8] fusion(p), kind=kCustom, calls=fused_custom
  mf = (f32[8], f32[8]) fusion(p), kind=kLoop, calls=fused_mof
  df = f32[8] fusion(p, u, i), kind=kLoop, calls=fused_dus
  dus = f32[8] dynamic-update-slice(p, u, i)
  s = f32[100,8] scatter(o, si, su), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[8]) tuple(n)
}
)"));
  for (std::string_view yes : {"n", "r", "tr", "lf", "mf", "df"}) {
    EXPECT_TRUE(IsFusibleAsMultiOutputFusionRoot(I(yes))) << yes;
  }
  for (std::string_view no : {"b", "cf", "s", "dus", "p"}) {
    EXPECT_FALSE(IsFusibleAsMultiOutputFusionRoot(I(no))) << no;
  }
  for (std::string_view yes : {"n", "b", "r", "lf"}) {
    EXPECT_TRUE(IsProducerMultiOutputFusible(I(yes))) << yes;
  }
  // Already multi-output, in-place, transposing, or not loop-fusible.
  for (std::string_view no : {"mf", "df", "dus", "tr", "cp", "s", "cf"}) {
    EXPECT_FALSE(IsProducerMultiOutputFusible(I(no))) << no;
  }
}

// ---------------------------------------------------------------------------
// Fusible computations.

class GpuFusibleComputationsTest : public GpuFusibleTest {};

TEST_F(GpuFusibleComputationsTest, ControlFlowOnly) {
  PARSE(StrCat("HloModule m\n", kAdd, R"(
fused {
  fp = f32[4] parameter(0)
  ROOT fn = f32[4] negate(fp)
}
cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cl = s32[] constant(3)
  ROOT lt = pred[] compare(ci, cl), direction=LT
}
body {
  bp = (s32[], f32[4]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[4] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  bn = s32[] add(bi, one)
  be = f32[4] exponential(bx)
  ROOT bt = (s32[], f32[4]) tuple(bn, be)
}
callee {
  kp = f32[4] parameter(0)
  ROOT kn = f32[4] negate(kp)
}
annotated {
  ap = f32[4] parameter(0)
  ROOT an = f32[4] negate(ap)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[4]) tuple(i0, p)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  wx = f32[4] get-tuple-element(w), index=1
  r = f32[] reduce(wx, z), dimensions={0}, to_apply=add
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  c = f32[4] call(f), to_apply=callee
  a = f32[4] call(c), to_apply=annotated, frontend_attributes={_xla_stream_annotation="1"}
  ROOT t = (f32[], f32[4]) tuple(r, a)
}
)"));
  std::vector<Computation*> comps = GetFusibleComputations(*module_);
  std::vector<std::string> names;
  for (const Computation* c : comps) names.push_back(c->name());
  ASSERT_EQ(names.size(), 4u) << ::testing::PrintToString(names);
  EXPECT_EQ(names.back(), "e");  // callees first
  std::vector<std::string> sorted(names.begin(), names.end() - 1);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"annotated", "body", "cond"}));
}

// Only live callers count: a computation the entry calls through a call
// stays fusible when a computation the entry never reaches maps over it,
// and the dead computation itself is not offered.
TEST_F(GpuFusibleComputationsTest, DeadCallersDoNotCount) {
  PARSE(R"(HloModule m
shared {
  sp = f32[] parameter(0)
  ROOT sn = f32[] negate(sp)
}
dead {
  dp = f32[4] parameter(0)
  ROOT dm = f32[4] map(dp), dimensions={0}, to_apply=shared
}
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=shared, frontend_attributes={_xla_stream_annotation="1"}
}
)");
  std::vector<std::string> names;
  for (const Computation* c : GetFusibleComputations(*module_)) {
    names.push_back(c->name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"shared", "e"}));
}

}  // namespace
}  // namespace hlogym
