#include "hlogym/env/observation.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/passes/alternative_graph.h"
#include "hlogym/passes/pass.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

using I32 = std::vector<int32_t>;
using I64 = std::vector<int64_t>;
using U64 = std::vector<uint64_t>;
using U8 = std::vector<uint8_t>;

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

Observation Build(const Module& m, ObservationOptions options = {}) {
  absl::StatusOr<Observation> obs = BuildObservation(m, options);
  EXPECT_TRUE(obs.ok()) << obs.status();
  return obs.ok() ? std::move(*obs) : Observation();
}

int64_t IndexOf(const Observation& obs, const std::string& name) {
  const auto& names = obs.node_features.names;
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : it - names.begin();
}

// The attribute vector of node `name`, and its (ints, one-hot) widths.
std::pair<I32, std::pair<int32_t, int32_t>> AttrsOf(const Observation& obs,
                                                    const std::string& name) {
  const NodeFeatures& nf = obs.node_features;
  const int64_t idx = IndexOf(obs, name);
  EXPECT_GE(idx, 0) << name;
  if (idx < 0) return {};
  int64_t begin = 0;
  for (int64_t i = 0; i < idx; ++i) {
    begin += nf.num_opcode_attrs[2 * i] + nf.num_opcode_attrs[2 * i + 1];
  }
  const int32_t ints = nf.num_opcode_attrs[2 * idx];
  const int32_t hot = nf.num_opcode_attrs[2 * idx + 1];
  return {I32(nf.opcode_attrs.begin() + begin,
              nf.opcode_attrs.begin() + begin + ints + hot),
          {ints, hot}};
}

// One-hot of width w at position i.
I32 Hot(int i, int w) {
  I32 v(w, 0);
  v[i] = 1;
  return v;
}
// Dimension list one-hots: the given dims, then "none" up to 6.
I32 Dims(std::vector<int> dims) {
  I32 v;
  for (int d : dims) {
    I32 h = Hot(d, 7);
    v.insert(v.end(), h.begin(), h.end());
  }
  for (size_t i = dims.size(); i < 6; ++i) {
    I32 h = Hot(6, 7);
    v.insert(v.end(), h.begin(), h.end());
  }
  return v;
}
I32 Cat(std::vector<I32> parts) {
  I32 v;
  for (const I32& p : parts) v.insert(v.end(), p.begin(), p.end());
  return v;
}
I64 Slots(std::vector<int64_t> head, int64_t pad) {
  I64 v(head.begin(), head.end());
  v.resize(8, pad);
  return v;
}
I64 EdgeSlots(const std::vector<int64_t>& all, int64_t edge) {
  return I64(all.begin() + edge * 8, all.begin() + edge * 8 + 8);
}

// Structural invariants every observation must satisfy.
void CheckConsistent(const Observation& obs) {
  const int64_t n = obs.num_nodes();
  const NodeFeatures& nf = obs.node_features;
  ASSERT_EQ(obs.in_edge_offsets.size(), static_cast<size_t>(n + 1));
  ASSERT_EQ(obs.out_edge_offsets.size(), static_cast<size_t>(n + 1));
  EXPECT_EQ(obs.in_edge_offsets[0], 0u);
  EXPECT_EQ(obs.out_edge_offsets[0], 0u);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_LE(obs.in_edge_offsets[i], obs.in_edge_offsets[i + 1]);
    ASSERT_LE(obs.out_edge_offsets[i], obs.out_edge_offsets[i + 1]);
    EXPECT_EQ(nf.num_operands[i],
              static_cast<int32_t>(obs.in_edge_offsets[i + 1] -
                                   obs.in_edge_offsets[i]));
    EXPECT_EQ(nf.num_users[i],
              static_cast<int32_t>(obs.out_edge_offsets[i + 1] -
                                   obs.out_edge_offsets[i]));
  }
  ASSERT_EQ(obs.in_edge_offsets[n], obs.in_edge_indices.size());
  ASSERT_EQ(obs.out_edge_offsets[n], obs.out_edge_indices.size());
  // In-edges and out-edges are the same set of (src, dst) pairs.
  std::vector<std::pair<int64_t, int64_t>> in_pairs, out_pairs;
  for (int64_t i = 0; i < n; ++i) {
    for (uint64_t e = obs.in_edge_offsets[i]; e < obs.in_edge_offsets[i + 1];
         ++e) {
      in_pairs.emplace_back(obs.in_edge_indices[e], i);
      EXPECT_EQ(obs.in_edge_features.srcs[e],
                static_cast<int32_t>(obs.in_edge_indices[e]));
      EXPECT_EQ(obs.in_edge_features.dsts[e], i);
    }
    for (uint64_t e = obs.out_edge_offsets[i]; e < obs.out_edge_offsets[i + 1];
         ++e) {
      out_pairs.emplace_back(i, obs.out_edge_indices[e]);
      EXPECT_EQ(obs.out_edge_features.srcs[e], i);
      EXPECT_EQ(obs.out_edge_features.dsts[e],
                static_cast<int32_t>(obs.out_edge_indices[e]));
    }
  }
  std::sort(in_pairs.begin(), in_pairs.end());
  std::sort(out_pairs.begin(), out_pairs.end());
  EXPECT_EQ(in_pairs, out_pairs);
  EXPECT_TRUE(std::adjacent_find(in_pairs.begin(), in_pairs.end()) ==
              in_pairs.end())
      << "duplicate edge";
  // Feature lengths.
  const size_t sn = static_cast<size_t>(n);
  EXPECT_EQ(nf.names.size(), sn);
  EXPECT_EQ(nf.gids.size(), sn);
  EXPECT_EQ(nf.fused_comp_ids.size(), sn);
  EXPECT_EQ(nf.num_users.size(), sn);
  EXPECT_EQ(nf.num_operands.size(), sn);
  EXPECT_EQ(nf.opcodes.size(), sn);
  EXPECT_EQ(nf.num_opcode_attrs.size(), 2 * sn);
  EXPECT_EQ(nf.is_alternative.size(), sn);
  EXPECT_EQ(nf.is_in_fusion.size(), sn);
  EXPECT_EQ(nf.in_tensor_sizes.size(), sn);
  EXPECT_EQ(nf.out_tensor_sizes.size(), sn);
  EXPECT_EQ(nf.has_max_in_tensor.size(), sn);
  EXPECT_EQ(nf.has_max_out_tensor.size(), sn);
  EXPECT_EQ(nf.normalized_num_group_inst.size(), sn);
  int64_t attr_total = 0;
  for (int32_t c : nf.num_opcode_attrs) attr_total += c;
  EXPECT_EQ(static_cast<int64_t>(nf.opcode_attrs.size()), attr_total);
  for (const EdgeFeatures* ef :
       {&obs.in_edge_features, &obs.out_edge_features}) {
    const size_t e = ef->uids.size();
    EXPECT_EQ(ef->srcs.size(), e);
    EXPECT_EQ(ef->dsts.size(), e);
    EXPECT_EQ(ef->dims.size(), 8 * e);
    EXPECT_EQ(ef->layouts.size(), 8 * e);
    EXPECT_EQ(ef->lehmercodes.size(), 8 * e);
    EXPECT_EQ(ef->types.size(), e);
    EXPECT_EQ(ef->dtypes.size(), e);
  }
  EXPECT_EQ(obs.in_edge_features.size(),
            static_cast<int64_t>(obs.in_edge_indices.size()));
}

constexpr char kSmall[] = R"(
HloModule small
ENTRY e {
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[2,3]{0,1} parameter(1)
  a = f32[2,3]{1,0} add(p0, p0)
  m = f32[2,3]{1,0} multiply(a, p1)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{1,0}) tuple(m, a)
}
)";

TEST(ObservationTest, SmallGraphEveryField) {
  auto m = Parse(kSmall);
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  const NodeFeatures& nf = obs.node_features;
  ASSERT_EQ(obs.num_nodes(), 5);
  EXPECT_EQ(nf.names, (std::vector<std::string>{"p0", "p1", "a", "m", "t"}));
  // Unique operands: add(p0, p0) has one in-edge.
  EXPECT_EQ(obs.in_edge_offsets, (U64{0, 0, 0, 1, 3, 5}));
  EXPECT_EQ(obs.in_edge_indices, (U64{0, 2, 1, 3, 2}));
  EXPECT_EQ(obs.out_edge_offsets, (U64{0, 1, 2, 4, 5, 5}));
  EXPECT_EQ(obs.out_edge_indices, (U64{2, 3, 3, 4, 4}));
  EXPECT_EQ(nf.num_operands, (I32{0, 0, 1, 2, 2}));
  EXPECT_EQ(nf.num_users, (I32{1, 1, 2, 1, 0}));
  EXPECT_EQ(nf.gids, (U64{0, 0, 0, 0, 0}));
  EXPECT_EQ(nf.fused_comp_ids, (U64{0, 0, 0, 0, 0}));
  EXPECT_EQ(nf.is_in_fusion, (U8{0, 0, 0, 0, 0}));
  EXPECT_EQ(nf.is_alternative, (U8{0, 0, 0, 0, 0}));
  EXPECT_TRUE(obs.alternative_indices.empty());
  EXPECT_EQ(nf.normalized_num_group_inst, (std::vector<float>{0, 0, 0, 0, 0}));
  EXPECT_EQ(nf.opcodes, (I32{static_cast<int32_t>(Opcode::kParameter),
                             static_cast<int32_t>(Opcode::kParameter),
                             static_cast<int32_t>(Opcode::kAdd),
                             static_cast<int32_t>(Opcode::kMultiply),
                             static_cast<int32_t>(Opcode::kTuple)}));
  EXPECT_TRUE(nf.opcode_attrs.empty());
  EXPECT_EQ(nf.num_opcode_attrs, (I32(10, 0)));
  // Tensor sizes: f32[2,3] = 6, the tuple 1.
  EXPECT_EQ(nf.in_tensor_sizes, (I64{0, 0, 6, 12, 12}));
  EXPECT_EQ(nf.out_tensor_sizes, (I64{6, 6, 6, 6, 1}));
  EXPECT_EQ(nf.has_max_in_tensor, (U8{0, 0, 0, 1, 1}));
  EXPECT_EQ(nf.has_max_out_tensor, (U8{1, 1, 1, 1, 0}));
  // Unique ids, and edge ids from them.
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(
        nf.uids[i],
        m->entry_computation()->FindInstruction(nf.names[i])->unique_id());
  }
  const EdgeFeatures& in = obs.in_edge_features;
  const EdgeFeatures& out = obs.out_edge_features;
  ASSERT_EQ(in.size(), 5);
  ASSERT_EQ(out.size(), 5);
  EXPECT_EQ(in.srcs, (I32{0, 2, 1, 3, 2}));
  EXPECT_EQ(in.dsts, (I32{2, 3, 3, 4, 4}));
  EXPECT_EQ(out.srcs, (I32{0, 1, 2, 2, 3}));
  EXPECT_EQ(out.dsts, (I32{2, 3, 3, 4, 4}));
  for (const EdgeFeatures* ef : {&in, &out}) {
    for (int64_t e = 0; e < ef->size(); ++e) {
      const int64_t src_uid = nf.uids[ef->srcs[e]];
      const int64_t dst_uid = nf.uids[ef->dsts[e]];
      EXPECT_EQ(ef->uids[e], (src_uid << 32) | dst_uid);
      EXPECT_EQ(EdgeSlots(ef->dims, e), Slots({2, 3}, -1));
      EXPECT_EQ(ef->TensorSize(e), 6);
      EXPECT_EQ(ef->types[e], 0);
      EXPECT_EQ(ef->dtypes[e], 11);  // F32
    }
  }
  // Layouts: p1 is {0,1}, the others {1,0}.
  EXPECT_EQ(EdgeSlots(in.layouts, 2), Slots({0, 1}, -1));  // p1 -> m
  EXPECT_EQ(EdgeSlots(in.lehmercodes, 2), Slots({0, 0}, 0));
  EXPECT_EQ(EdgeSlots(in.layouts, 1), Slots({1, 0}, -1));  // a -> m
  EXPECT_EQ(EdgeSlots(in.lehmercodes, 1), Slots({0, 1}, 0));
  EXPECT_EQ(EdgeSlots(out.layouts, 1), Slots({0, 1}, -1));  // p1 -> m
  EXPECT_EQ(obs.opcode_attr_counts.size(), 2u * kNumOpcodes);
}

TEST(ObservationTest, HloEnvOutTensorSizesMultiplyByUsers) {
  auto m = Parse(kSmall);
  ASSERT_NE(m, nullptr);
  ObservationOptions options;
  options.hloenv_out_tensor_sizes = true;
  Observation obs = Build(*m, options);
  EXPECT_EQ(obs.node_features.out_tensor_sizes, (I64{6, 6, 12, 6, 0}));
  EXPECT_EQ(obs.node_features.has_max_out_tensor, (U8{0, 0, 1, 0, 0}));
  EXPECT_EQ(obs.node_features.in_tensor_sizes, (I64{0, 0, 6, 12, 12}));
}

constexpr char kCalled[] = R"(
HloModule called
add_comp {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  fp = f32[4]{0} parameter(0)
  ROOT fn = f32[4]{0} negate(fp)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  f = f32[4]{0} fusion(p), kind=kLoop, calls=fused
  z = f32[] constant(0)
  ROOT r = f32[] reduce(f, z), dimensions={0}, to_apply=add_comp
}
)";

TEST(ObservationTest, GroupsOfFusionAndReduceComputations) {
  auto m = Parse(kCalled);
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  const NodeFeatures& nf = obs.node_features;
  // Entry first, then the callees in reverse post-order.
  EXPECT_EQ(nf.names, (std::vector<std::string>{"p", "f", "z", "r", "fp", "fn",
                                                "x", "y", "s"}));
  std::vector<Instruction*> order = ObservationOrder(*m);
  ASSERT_EQ(order.size(), 9u);
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i]->name(), nf.names[i]);
  }
  EXPECT_EQ(nf.gids, (U64{0, 0, 0, 0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(nf.fused_comp_ids, (U64{0, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(nf.is_in_fusion, (U8{0, 0, 0, 0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(nf.normalized_num_group_inst,
            (std::vector<float>{0, 0, 0, 0, 0.5f, 0.5f, 1.0f / 3, 1.0f / 3,
                                1.0f / 3}));
  // No edge crosses computations; edges inside callees have type 1.
  EXPECT_EQ(obs.in_edge_indices, (U64{0, 1, 2, 4, 6, 7}));
  EXPECT_EQ(obs.in_edge_features.types, (U8{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(obs.out_edge_features.types, (U8{0, 0, 0, 1, 1, 1}));
  // reduce(f, z): 4 + 1 elements in; scalars are all -1 dims.
  EXPECT_EQ(nf.in_tensor_sizes, (I64{0, 4, 0, 5, 0, 4, 0, 0, 2}));
  EXPECT_EQ(EdgeSlots(obs.in_edge_features.dims, 2), Slots({}, -1));
  EXPECT_EQ(EdgeSlots(obs.in_edge_features.layouts, 2), Slots({}, -1));
  EXPECT_EQ(obs.in_edge_features.TensorSize(2), 1);
  // The reduce's dimensions one-hot.
  auto [attrs, widths] = AttrsOf(obs, "r");
  EXPECT_EQ(widths, (std::pair<int32_t, int32_t>{0, 42}));
  EXPECT_EQ(attrs, Dims({0}));
}

TEST(ObservationTest, HloEnvNumbering) {
  EXPECT_EQ(NumOpcodes(OpcodeNumbering::kHloEnv), 118);
  EXPECT_EQ(NumOpcodes(OpcodeNumbering::kHloGym), kNumOpcodes);
  auto env = [](Opcode op) {
    absl::StatusOr<int32_t> n = OpcodeNumber(op, OpcodeNumbering::kHloEnv);
    return n.ok() ? *n : -100;
  };
  EXPECT_EQ(env(Opcode::kAbs), 0);
  EXPECT_EQ(env(Opcode::kAdd), 1);
  EXPECT_EQ(env(Opcode::kAtan2), 14);
  EXPECT_EQ(env(Opcode::kAlternatives), 15);
  EXPECT_EQ(env(Opcode::kBroadcast), 21);
  EXPECT_EQ(env(Opcode::kFusion), 51);
  EXPECT_EQ(env(Opcode::kSetDimensionSize), 54);
  EXPECT_EQ(env(Opcode::kParameter), 75);
  EXPECT_EQ(env(Opcode::kCbrt), 109);
  EXPECT_EQ(env(Opcode::kTuple), 115);
  EXPECT_EQ(env(Opcode::kWhile), 117);
  EXPECT_EQ(OpcodeNumberName(112, OpcodeNumbering::kHloEnv), "trace");
  EXPECT_EQ(OpcodeNumberName(116, OpcodeNumbering::kHloEnv), "tuple-select");
  EXPECT_EQ(OpcodeNumberName(118, OpcodeNumbering::kHloEnv), "");
  // Every named HloEnv opcode that HloGym has maps back to its number.
  int mapped = 0;
  for (int i = 0; i < kNumOpcodes; ++i) {
    const int32_t n = env(static_cast<Opcode>(i));
    if (n < 0) continue;
    ++mapped;
    EXPECT_EQ(OpcodeNumberName(n, OpcodeNumbering::kHloEnv),
              OpcodeName(static_cast<Opcode>(i)));
  }
  EXPECT_EQ(mapped, 116);  // all but trace and tuple-select
  absl::StatusOr<int32_t> erf =
      OpcodeNumber(Opcode::kErf, OpcodeNumbering::kHloEnv);
  ASSERT_FALSE(erf.ok());
  EXPECT_NE(erf.status().message().find("'erf'"), std::string::npos)
      << erf.status();
  EXPECT_EQ(*OpcodeNumber(Opcode::kErf, OpcodeNumbering::kHloGym),
            static_cast<int32_t>(Opcode::kErf));

  // The graph-level attribute table.
  const std::vector<int32_t> t = OpcodeAttrCountTable(OpcodeNumbering::kHloEnv);
  ASSERT_EQ(t.size(), 236u);
  auto pair = [&](int n) { return std::make_pair(t[2 * n], t[2 * n + 1]); };
  using P = std::pair<int32_t, int32_t>;
  EXPECT_EQ(pair(0), (P{0, 0}));      // abs
  EXPECT_EQ(pair(21), (P{0, 42}));    // broadcast
  EXPECT_EQ(pair(30), (P{0, 10}));    // compare
  EXPECT_EQ(pair(36), (P{16, 168}));  // convolution
  EXPECT_EQ(pair(41), (P{0, 13}));    // custom-call
  EXPECT_EQ(pair(44), (P{0, 171}));   // dot
  EXPECT_EQ(pair(45), (P{6, 0}));     // dynamic-slice
  EXPECT_EQ(pair(52), (P{7, 128}));   // gather
  EXPECT_EQ(pair(54), (P{0, 42}));    // set-dimension-size
  EXPECT_EQ(pair(55), (P{1, 0}));     // get-tuple-element
  EXPECT_EQ(pair(58), (P{0, 7}));     // iota
  EXPECT_EQ(pair(74), (P{18, 0}));    // pad
  EXPECT_EQ(pair(96), (P{1, 130}));   // scatter
  EXPECT_EQ(pair(106), (P{18, 0}));   // slice
  EXPECT_EQ(pair(107), (P{0, 9}));    // sort
  EXPECT_EQ(pair(113), (P{0, 42}));   // transpose
  EXPECT_EQ(pair(114), (P{0, 10}));   // triangular-solve
  EXPECT_EQ(pair(117), (P{0, 0}));    // while
  const std::vector<int32_t> g = OpcodeAttrCountTable(OpcodeNumbering::kHloGym);
  ASSERT_EQ(g.size(), 2u * kNumOpcodes);
  const int dot = static_cast<int>(Opcode::kDot);
  EXPECT_EQ(g[2 * dot + 1], 171);
  const int sds = static_cast<int>(Opcode::kSetDimensionSize);
  EXPECT_EQ(g[2 * sds + 1], 42);

  // Observations in HloEnv numbering.
  auto m = Parse(kCalled);
  ASSERT_NE(m, nullptr);
  ObservationOptions options;
  options.numbering = OpcodeNumbering::kHloEnv;
  Observation obs = Build(*m, options);
  EXPECT_EQ(obs.node_features.opcodes,
            (I32{75, 51, 34, 82, 75, 72, 75, 75, 1}));
  EXPECT_EQ(obs.opcode_attr_counts, t);

  auto erf_module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] erf(p)
}
)");
  ASSERT_NE(erf_module, nullptr);
  absl::StatusOr<Observation> bad = BuildObservation(*erf_module, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'erf'"), std::string::npos);
  EXPECT_TRUE(BuildObservation(*erf_module).ok());  // HloGym numbering
}

constexpr char kAttrs[] = R"(
HloModule attrs
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ci = s32[2,3]{1,0} parameter(1)
  go = f32[3,4]{1,0} parameter(2)
  gi = s32[2,1]{1,0} parameter(3)
  lhs = f32[1,5,5,2]{3,2,1,0} parameter(4)
  rhs = f32[3,3,2,4]{3,2,1,0} parameter(5)
  i0 = s32[] parameter(6)
  zero = f32[] constant(0)
  b = f32[4,2,3]{2,1,0} broadcast(p), dimensions={1,2}
  tr = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  cgt = pred[2,3]{1,0} compare(p, p), direction=GT
  clt = pred[2,3]{1,0} compare(ci, ci), direction=LT
  ceq = pred[2,3]{1,0} compare(p, p), direction=EQ, type=TOTALORDER
  d = f32[2,2]{1,0} dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,default}
  s = f32[1,2]{1,0} slice(p), slice={[1:2], [0:3:2]}
  pd = f32[5,6]{1,0} pad(p, zero), padding=1_2x0_1_1
  g = f32[2,4]{1,0} gather(go, gi), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  tup = (f32[2,3]{1,0}, s32[2,3]{1,0}) tuple(p, ci)
  gte = s32[2,3]{1,0} get-tuple-element(tup), index=1
  io = s32[4,5]{1,0} iota(), iota_dimension=1
  ccg = f32[2,3]{1,0} custom-call(p), custom_call_target="__cublas$gemm"
  ccu = f32[2,3]{1,0} custom-call(p), custom_call_target="my_target"
  ds = f32[1,2]{1,0} dynamic-slice(p, i0, i0), dynamic_slice_sizes={1,2}
  conv = f32[1,3,3,4]{3,2,1,0} convolution(lhs, rhs), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT neg = f32[2,3]{1,0} negate(p)
}
)";

TEST(ObservationTest, PerOpcodeAttributeVectors) {
  auto m = Parse(kAttrs);
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  using W = std::pair<int32_t, int32_t>;
  {
    auto [a, w] = AttrsOf(obs, "b");
    EXPECT_EQ(w, (W{0, 42}));
    EXPECT_EQ(a, Dims({1, 2}));
  }
  {
    auto [a, w] = AttrsOf(obs, "tr");
    EXPECT_EQ(w, (W{0, 42}));
    EXPECT_EQ(a, Dims({1, 0}));
  }
  {
    // XLA order EQ NE GE GT LE LT; FLOAT TOTALORDER SIGNED UNSIGNED.
    auto [a, w] = AttrsOf(obs, "cgt");
    EXPECT_EQ(w, (W{0, 10}));
    EXPECT_EQ(a, Cat({Hot(3, 6), Hot(0, 4)}));
    EXPECT_EQ(AttrsOf(obs, "clt").first, Cat({Hot(5, 6), Hot(2, 4)}));
    EXPECT_EQ(AttrsOf(obs, "ceq").first, Cat({Hot(0, 6), Hot(1, 4)}));
  }
  {
    auto [a, w] = AttrsOf(obs, "d");
    EXPECT_EQ(w, (W{0, 171}));
    EXPECT_EQ(a, Cat({Dims({}), Dims({1}), Dims({}), Dims({1}), Hot(2, 3)}));
  }
  {
    auto [a, w] = AttrsOf(obs, "s");
    EXPECT_EQ(w, (W{18, 0}));
    EXPECT_EQ(a, (I32{1, 2, 1, 0, 3, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                      -1, -1}));
  }
  {
    auto [a, w] = AttrsOf(obs, "pd");
    EXPECT_EQ(w, (W{18, 0}));
    EXPECT_EQ(a, (I32{1, 2, 0, 0, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                      -1, -1}));
  }
  {
    auto [a, w] = AttrsOf(obs, "g");
    EXPECT_EQ(w, (W{7, 128}));
    EXPECT_EQ(a, Cat({I32{1, 1, 4, -1, -1, -1, -1}, Dims({1}), Dims({0}),
                      Dims({0}), Hot(0, 2)}));
  }
  {
    auto [a, w] = AttrsOf(obs, "gte");
    EXPECT_EQ(w, (W{1, 0}));
    EXPECT_EQ(a, (I32{1}));
  }
  {
    auto [a, w] = AttrsOf(obs, "io");
    EXPECT_EQ(w, (W{0, 7}));
    EXPECT_EQ(a, Hot(1, 7));
  }
  {
    auto [a, w] = AttrsOf(obs, "ccg");
    EXPECT_EQ(w, (W{0, 13}));
    EXPECT_EQ(a, Hot(0, 13));
    EXPECT_EQ(AttrsOf(obs, "ccu").first, Hot(12, 13));
  }
  {
    auto [a, w] = AttrsOf(obs, "ds");
    EXPECT_EQ(w, (W{6, 0}));
    EXPECT_EQ(a, (I32{1, 2, -1, -1, -1, -1}));
  }
  {
    auto [a, w] = AttrsOf(obs, "conv");
    EXPECT_EQ(w, (W{16, 168}));
    // Per window dim: size, stride, pad lo/hi, base and window dilation,
    // reversal; then the group counts; then the dimension labels
    // b01f_01io->b01f.
    EXPECT_EQ(a, Cat({I32{3, 2, 1, 1, 1, 1, 0, 3, 2, 1, 1, 1, 1, 0, 1, 1},
                      Hot(0, 7), Hot(3, 7), Dims({1, 2}), Hot(2, 7), Hot(3, 7),
                      Dims({0, 1}), Hot(0, 7), Hot(3, 7), Dims({1, 2})}));
  }
  {
    auto [a, w] = AttrsOf(obs, "neg");
    EXPECT_EQ(w, (W{0, 0}));
    EXPECT_TRUE(a.empty());
  }
  // The get-tuple-element reads a tuple: dims all -1, dtype TUPLE.
  const int64_t gte = IndexOf(obs, "gte");
  const uint64_t e = obs.in_edge_offsets[gte];
  EXPECT_EQ(EdgeSlots(obs.in_edge_features.dims, e), Slots({}, -1));
  EXPECT_EQ(obs.in_edge_features.dtypes[e], 13);
  EXPECT_EQ(obs.in_edge_features.TensorSize(e), 1);
}

TEST(ObservationTest, DtypesUseXlaNumbers) {
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kPred), 1);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS8), 2);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS16), 3);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS32), 4);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS64), 5);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU8), 6);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU16), 7);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU32), 8);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU64), 9);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF16), 10);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF32), 11);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF64), 12);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kTuple), 13);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kOpaque), 14);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kC64), 15);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kBF16), 16);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kToken), 17);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kC128), 18);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E5M2), 19);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E4M3FN), 20);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS4), 21);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU4), 22);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E4M3B11FNUZ), 23);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E5M2FNUZ), 24);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E4M3FNUZ), 25);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS2), 26);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU2), 27);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E4M3), 28);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E3M4), 29);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kS1), 30);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kU1), 31);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF4E2M1FN), 32);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kF8E8M0FNU), 33);
  EXPECT_EQ(XlaPrimitiveTypeNumber(PrimitiveType::kBuffer), 34);
  // Distinct numbers for distinct types.
  std::vector<int32_t> all;
  for (int t = 1; t < static_cast<int>(PrimitiveType::kNumTypes); ++t) {
    all.push_back(XlaPrimitiveTypeNumber(static_cast<PrimitiveType>(t)));
  }
  std::sort(all.begin(), all.end());
  EXPECT_TRUE(std::adjacent_find(all.begin(), all.end()) == all.end());

  auto m = Parse(R"(
HloModule types
ENTRY e {
  a = bf16[2]{0} parameter(0)
  b = pred[] parameter(1)
  c = u8[3]{0} parameter(2)
  d = s64[] parameter(3)
  t = token[] after-all()
  ROOT r = (bf16[2]{0}, pred[], u8[3]{0}, s64[], token[]) tuple(a, b, c, d, t)
}
)");
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  EXPECT_EQ(obs.in_edge_features.dtypes, (I32{16, 1, 6, 5, 17}));
  EXPECT_EQ(obs.out_edge_features.dtypes, (I32{16, 1, 6, 5, 17}));
  EXPECT_EQ(EdgeSlots(obs.in_edge_features.dims, 4), Slots({}, -1));
  EXPECT_EQ(obs.node_features.in_tensor_sizes.back(), 2 + 1 + 3 + 1 + 1);
}

TEST(ObservationTest, EdgeShapeSlots) {
  auto m = Parse(R"(
HloModule shapes
ENTRY e {
  big = f32[1,2,3,4,5,6,7,8,9]{8,7,6,5,4,3,2,1,0} parameter(0)
  perm = f32[2,3,4]{0,2,1} parameter(1)
  nb = f32[1,2,3,4,5,6,7,8,9]{8,7,6,5,4,3,2,1,0} negate(big)
  np = f32[2,3,4]{0,2,1} negate(perm)
  ROOT t = (f32[1,2,3,4,5,6,7,8,9]{8,7,6,5,4,3,2,1,0}, f32[2,3,4]{0,2,1}) tuple(nb, np)
}
)");
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  const EdgeFeatures& in = obs.in_edge_features;
  // Node order: big, perm, nb, np, t; in-edges: big->nb, perm->np, nb->t,
  // np->t.
  ASSERT_EQ(in.size(), 4);
  // Rank 9: the ninth dimension is dropped.
  EXPECT_EQ(EdgeSlots(in.dims, 0), (I64{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(EdgeSlots(in.layouts, 0), (I64{8, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(EdgeSlots(in.lehmercodes, 0), (I64{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(in.TensorSize(0), 40320);
  // minor_to_major {0,2,1}: slot 2 has one larger entry before it.
  EXPECT_EQ(EdgeSlots(in.dims, 1), Slots({2, 3, 4}, -1));
  EXPECT_EQ(EdgeSlots(in.layouts, 1), Slots({0, 2, 1}, -1));
  EXPECT_EQ(EdgeSlots(in.lehmercodes, 1), Slots({0, 0, 1}, 0));
  EXPECT_EQ(in.TensorSize(1), 24);
  EXPECT_EQ(obs.node_features.in_tensor_sizes, (I64{0, 0, 40320, 24, 40344}));
}

TEST(ObservationTest, AlternativesInText) {
  auto m = Parse(R"(
HloModule alt
ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p)
  b = f32[4]{0} abs(p)
  alt = f32[4]{0} alternatives(a, b)
  ROOT r = f32[4]{0} add(alt, p)
}
)");
  ASSERT_NE(m, nullptr);
  ObservationOptions options;
  options.numbering = OpcodeNumbering::kHloEnv;
  Observation obs = Build(*m, options);
  CheckConsistent(obs);
  EXPECT_EQ(obs.node_features.names,
            (std::vector<std::string>{"p", "a", "b", "alt", "r"}));
  EXPECT_EQ(obs.alternative_indices, (I32{3}));
  EXPECT_EQ(obs.node_features.is_alternative, (U8{0, 0, 0, 1, 0}));
  EXPECT_EQ(obs.node_features.opcodes[3], 15);
  // The candidates are the node's in-edges, in operand order.
  EXPECT_EQ(obs.in_edge_offsets[3], 2u);
  EXPECT_EQ(obs.in_edge_indices[2], 1u);
  EXPECT_EQ(obs.in_edge_indices[3], 2u);
}

TEST(ObservationTest, AlternativesFromDryPass) {
  auto m = Parse(R"(
HloModule dry
ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p)
  b = f32[4]{0} negate(a)
  ROOT r = f32[4]{0} multiply(b, p)
}
)");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::unique_ptr<Pass>> pass =
      PassRegistry::Global().Create("algebraic-simplifier");
  ASSERT_TRUE(pass.ok()) << pass.status();
  absl::StatusOr<AugmentStats> stats = (*pass)->RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_GE(stats->alternatives, 1);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  std::vector<Instruction*> order = ObservationOrder(*m);
  std::vector<Instruction*> alts = AlternativeNodes(*m);
  ASSERT_EQ(obs.alternative_indices.size(), alts.size());
  ASSERT_EQ(order.size(), static_cast<size_t>(obs.num_nodes()));
  for (size_t j = 0; j < alts.size(); ++j) {
    const int32_t idx = obs.alternative_indices[j];
    EXPECT_EQ(order[idx], alts[j]);
    EXPECT_EQ(obs.node_features.names[idx], alts[j]->name());
    EXPECT_EQ(obs.node_features.is_alternative[idx], 1);
    EXPECT_EQ(obs.node_features.num_operands[idx], alts[j]->operand_count());
  }
}

TEST(ObservationTest, ErrorsAndUnsupportedInlining) {
  auto m = Parse(kSmall);
  ASSERT_NE(m, nullptr);
  ObservationOptions options;
  options.inline_fused_comp = true;
  absl::StatusOr<Observation> obs = BuildObservation(*m, options);
  ASSERT_FALSE(obs.ok());
  EXPECT_EQ(obs.status().code(), absl::StatusCode::kUnimplemented);
  Module empty("empty");
  absl::StatusOr<Observation> none = BuildObservation(empty);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(SummaryFeatures(empty, OpcodeNumbering::kHloGym).ok());
}

TEST(ObservationTest, WhileLoopOrderMatchesObservationOrder) {
  auto m = Parse(R"(
HloModule loop
cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
body {
  bp = (s32[], f32[4]{0}) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  ni = s32[] add(bi, one)
  nx = f32[4]{0} add(bx, bx)
  ROOT bt = (s32[], f32[4]{0}) tuple(ni, nx)
}
ENTRY e {
  x = f32[4]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(z, x)
  w = (s32[], f32[4]{0}) while(init), condition=cond, body=body
  ROOT out = f32[4]{0} get-tuple-element(w), index=1
}
)");
  ASSERT_NE(m, nullptr);
  Observation obs = Build(*m);
  CheckConsistent(obs);
  std::vector<Instruction*> order = ObservationOrder(*m);
  std::vector<Computation*> comps = ObservationComputationOrder(*m);
  ASSERT_EQ(order.size(), static_cast<size_t>(obs.num_nodes()));
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i]->name(), obs.node_features.names[i]);
    const uint64_t gid = obs.node_features.gids[i];
    ASSERT_LT(gid, comps.size());
    EXPECT_EQ(order[i]->parent(), comps[gid]);
  }
  EXPECT_EQ(obs.node_features.fused_comp_ids, U64(order.size(), 0));
  // nx = add(bx, bx): one in-edge; the while reads a tuple.
  const int64_t nx = IndexOf(obs, "nx");
  EXPECT_EQ(obs.node_features.num_operands[nx], 1);
  EXPECT_EQ(obs.node_features.normalized_num_group_inst[nx], 1.0f / 7);
  const int64_t w = IndexOf(obs, "w");
  EXPECT_EQ(obs.in_edge_features.dtypes[obs.in_edge_offsets[w]], 13);
}

void ExpectSameObservation(const Observation& a, const Observation& b) {
  EXPECT_EQ(a.out_edge_offsets, b.out_edge_offsets);
  EXPECT_EQ(a.out_edge_indices, b.out_edge_indices);
  EXPECT_EQ(a.in_edge_offsets, b.in_edge_offsets);
  EXPECT_EQ(a.in_edge_indices, b.in_edge_indices);
  EXPECT_EQ(a.alternative_indices, b.alternative_indices);
  EXPECT_EQ(a.opcode_attr_counts, b.opcode_attr_counts);
  const NodeFeatures& x = a.node_features;
  const NodeFeatures& y = b.node_features;
  EXPECT_EQ(x.uids, y.uids);
  EXPECT_EQ(x.names, y.names);
  EXPECT_EQ(x.gids, y.gids);
  EXPECT_EQ(x.fused_comp_ids, y.fused_comp_ids);
  EXPECT_EQ(x.num_users, y.num_users);
  EXPECT_EQ(x.num_operands, y.num_operands);
  EXPECT_EQ(x.opcodes, y.opcodes);
  EXPECT_EQ(x.opcode_attrs, y.opcode_attrs);
  EXPECT_EQ(x.num_opcode_attrs, y.num_opcode_attrs);
  EXPECT_EQ(x.is_alternative, y.is_alternative);
  EXPECT_EQ(x.is_in_fusion, y.is_in_fusion);
  EXPECT_EQ(x.in_tensor_sizes, y.in_tensor_sizes);
  EXPECT_EQ(x.out_tensor_sizes, y.out_tensor_sizes);
  EXPECT_EQ(x.has_max_in_tensor, y.has_max_in_tensor);
  EXPECT_EQ(x.has_max_out_tensor, y.has_max_out_tensor);
  EXPECT_EQ(x.normalized_num_group_inst, y.normalized_num_group_inst);
  for (int k = 0; k < 2; ++k) {
    const EdgeFeatures& e = k == 0 ? a.in_edge_features : a.out_edge_features;
    const EdgeFeatures& f = k == 0 ? b.in_edge_features : b.out_edge_features;
    EXPECT_EQ(e.uids, f.uids);
    EXPECT_EQ(e.srcs, f.srcs);
    EXPECT_EQ(e.dsts, f.dsts);
    EXPECT_EQ(e.dims, f.dims);
    EXPECT_EQ(e.layouts, f.layouts);
    EXPECT_EQ(e.lehmercodes, f.lehmercodes);
    EXPECT_EQ(e.types, f.types);
    EXPECT_EQ(e.dtypes, f.dtypes);
  }
}

TEST(ObservationTest, ReusedObservationIsOverwritten) {
  auto big = Parse(kAttrs);
  auto small = Parse(kCalled);
  auto alt = Parse(R"(
HloModule alt
ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p)
  ROOT alt = f32[4]{0} alternatives(a, p)
}
)");
  ASSERT_NE(big, nullptr);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(alt, nullptr);
  Observation reused;
  ASSERT_TRUE(BuildObservationInto(*alt, {}, &reused).ok());
  ASSERT_TRUE(BuildObservationInto(*big, {}, &reused).ok());
  ExpectSameObservation(reused, Build(*big));
  ObservationOptions env;
  env.numbering = OpcodeNumbering::kHloEnv;
  ASSERT_TRUE(BuildObservationInto(*small, env, &reused).ok());
  ExpectSameObservation(reused, Build(*small, env));
  EXPECT_TRUE(reused.alternative_indices.empty());
}

// A real model after a dry fusion pass: structure and decision indices.
TEST(ObservationTest, ExampleModuleAfterDryFusion) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModuleFile(
      std::string(HLOGYM_SOURCE_DIR) + "/examples/transformer_encoder.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<Pass>> pass =
      PassRegistry::Global().Create("general-fusion");
  ASSERT_TRUE(pass.ok()) << pass.status();
  absl::StatusOr<AugmentStats> stats = (*pass)->RunDry(m->get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_GT(stats->alternatives, 0);
  ObservationOptions options;
  options.numbering = OpcodeNumbering::kHloEnv;
  Observation obs = Build(**m, options);
  CheckConsistent(obs);
  EXPECT_EQ(obs.num_nodes(), (*m)->instruction_count());
  std::vector<Instruction*> order = ObservationOrder(**m);
  std::vector<Instruction*> alts = AlternativeNodes(**m);
  ASSERT_EQ(obs.alternative_indices.size(), alts.size());
  for (size_t j = 0; j < alts.size(); ++j) {
    EXPECT_EQ(order[obs.alternative_indices[j]], alts[j]);
  }
  // Fusions point at computations whose nodes are marked in-fusion.
  int64_t fusions = 0;
  for (int64_t i = 0; i < obs.num_nodes(); ++i) {
    EXPECT_EQ(obs.node_features.names[i], order[i]->name());
    const uint64_t fc = obs.node_features.fused_comp_ids[i];
    if (order[i]->opcode() != Opcode::kFusion) {
      EXPECT_EQ(fc, 0u);
      continue;
    }
    ++fusions;
    ASSERT_GT(fc, 0u);
    const auto& gids = obs.node_features.gids;
    const int64_t first =
        std::find(gids.begin(), gids.end(), fc) - gids.begin();
    ASSERT_LT(first, obs.num_nodes());
    EXPECT_EQ(order[first]->parent(), order[i]->fused_computation());
    EXPECT_EQ(obs.node_features.is_in_fusion[first], 1);
  }
  EXPECT_GT(fusions, 0);
}

TEST(ObservationTest, SummaryFeatures) {
  auto m = Parse(kCalled);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<std::vector<float>> f =
      SummaryFeatures(*m, OpcodeNumbering::kHloEnv);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->size(), 118u + kNumSummaryStats);
  EXPECT_EQ(static_cast<int32_t>(f->size()),
            SummaryFeatureSize(OpcodeNumbering::kHloEnv));
  std::vector<float> hist(118, 0.0f);
  hist[75] = 4;  // parameters: p, fp, x, y
  hist[51] = 1;  // fusion
  hist[34] = 1;  // constant
  hist[82] = 1;  // reduce
  hist[72] = 1;  // negate
  hist[1] = 1;   // add
  EXPECT_EQ(std::vector<float>(f->begin(), f->begin() + 118), hist);
  // Nodes 9, edges 6, alternatives 0, computations 3, fusion computations
  // 1, entry nodes 4, entry parameters 1, tensor sizes 4+4+1+1+4+4+1+1+1 =
  // 21 (max 4), bytes 4*16 + 5*4 = 84 (max 16), max operands 2, max users 1.
  EXPECT_EQ(std::vector<float>(f->begin() + 118, f->end()),
            (std::vector<float>{9, 6, 0, 3, 1, 4, 1, 21, 4, 84, 16, 2, 1}));
  absl::StatusOr<std::vector<float>> g =
      SummaryFeatures(*m, OpcodeNumbering::kHloGym);
  ASSERT_TRUE(g.ok());
  ASSERT_EQ(g->size(), static_cast<size_t>(kNumOpcodes + kNumSummaryStats));
  EXPECT_EQ((*g)[static_cast<int>(Opcode::kParameter)], 4.0f);
}

}  // namespace
}  // namespace hlogym
