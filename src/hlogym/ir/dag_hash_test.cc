#include "hlogym/ir/dag_hash.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

// Built from an initializer list: moving an empty DimVector trips a GCC 12
// maybe-uninitialized false positive.
Shape F32(std::initializer_list<int64_t> dims) {
  return Shape(PrimitiveType::kF32, DimVector(dims.begin(), dims.end()));
}
Shape Pred(std::initializer_list<int64_t> dims) {
  return Shape(PrimitiveType::kPred, DimVector(dims.begin(), dims.end()));
}

// Creates an instruction with operands, ready to be added to a computation.
std::unique_ptr<Instruction> Make(Opcode op, Shape shape,
                                  std::vector<Instruction*> operands,
                                  std::string name) {
  auto inst = std::make_unique<Instruction>(op, std::move(shape));
  for (Instruction* o : operands) inst->AppendOperand(o);
  inst->set_name(std::move(name));
  return inst;
}

Instruction* Add(Computation* c, Opcode op, Shape shape,
                 std::vector<Instruction*> operands, std::string name) {
  return c->AddInstruction(
      Make(op, std::move(shape), std::move(operands), std::move(name)));
}

Instruction* Param(Computation* c, int64_t n, Shape shape, std::string name) {
  auto p = Make(Opcode::kParameter, std::move(shape), {}, std::move(name));
  p->set_int_attr(n);
  return c->AddInstruction(std::move(p));
}

Instruction* ScalarConstant(Computation* c, float v, std::string name) {
  auto k = Make(Opcode::kConstant, F32({}), {}, std::move(name));
  Literal lit(F32({}));
  lit.SetFromDouble(0, v);
  k->set_literal(std::move(lit));
  return c->AddInstruction(std::move(k));
}

std::unique_ptr<Computation> BinaryRegion(const std::string& name, Opcode op) {
  auto c = std::make_unique<Computation>(name);
  Instruction* a = Param(c.get(), 0, F32({}), "lhs");
  Instruction* b = Param(c.get(), 1, F32({}), "rhs");
  c->set_root_instruction(Add(c.get(), op, F32({}), {a, b}, "r"));
  return c;
}

// A small module touching most kinds of state the hash covers: a reduce
// region, a fusion, a dot, a compare/select, a custom call, a tuple root.
std::unique_ptr<Module> BuildModule() {
  auto m = std::make_unique<Module>("test_module");
  Computation* sum =
      m->AddComputation(BinaryRegion("region_0.1", Opcode::kAdd), false);

  auto fused = std::make_unique<Computation>("fused_computation");
  {
    Instruction* a = Param(fused.get(), 0, F32({4, 8}), "param_0");
    Instruction* b = Param(fused.get(), 1, F32({4, 8}), "param_1");
    Instruction* mul =
        Add(fused.get(), Opcode::kMultiply, F32({4, 8}), {a, b}, "multiply.0");
    fused->set_root_instruction(
        Add(fused.get(), Opcode::kExp, F32({4, 8}), {mul}, "exponential.0"));
    fused->set_is_fusion_computation(true);
  }
  Computation* fc = m->AddComputation(std::move(fused), false);

  auto e = std::make_unique<Computation>("main.10");
  Computation* c = e.get();
  Instruction* p0 = Param(c, 0, F32({4, 8}), "p0");
  Instruction* p1 = Param(c, 1, F32({8, 16}), "p1");
  Instruction* sub =
      Add(c, Opcode::kSubtract, F32({4, 8}), {p0, p0}, "subtract.1");
  Instruction* fusion = Add(c, Opcode::kFusion, F32({4, 8}), {p0, sub}, "f");
  fusion->set_called_computations({fc});
  fusion->set_fusion_kind(FusionKind::kLoop);
  Instruction* dot = Add(c, Opcode::kDot, F32({4, 16}), {fusion, p1}, "dot");
  {
    DotDimensionNumbers d;
    d.lhs_contracting_dimensions = {1};
    d.rhs_contracting_dimensions = {0};
    dot->mutable_attrs()->dot_dnums = d;
  }
  Instruction* zero = ScalarConstant(c, 0.0f, "zero");
  Instruction* red = Add(c, Opcode::kReduce, F32({4}), {dot, zero}, "reduce");
  red->set_dimensions({1});
  red->set_called_computations({sum});
  Instruction* bcast =
      Add(c, Opcode::kBroadcast, F32({4, 16}), {red}, "broadcast");
  bcast->set_dimensions({0});
  Instruction* cmp =
      Add(c, Opcode::kCompare, Pred({4, 16}), {dot, bcast}, "compare");
  cmp->set_comparison_direction(ComparisonDirection::kGt);
  Instruction* sel =
      Add(c, Opcode::kSelect, F32({4, 16}), {cmp, dot, bcast}, "select");
  Instruction* cc = Add(c, Opcode::kCustomCall, F32({4, 16}), {sel}, "cc");
  cc->mutable_attrs()->custom_call_target = "MyTarget";
  cc->mutable_attrs()->has_custom_call_target = true;
  cc->set_backend_config("{\"k\":1}");
  Instruction* slice = Add(c, Opcode::kSlice, F32({2, 16}), {cc}, "slice");
  slice->mutable_attrs()->slice = {{0, 2, 1}, {0, 16, 1}};
  Instruction* tuple =
      Add(c, Opcode::kTuple, Shape::Tuple({F32({2, 16}), F32({4})}),
          {slice, red}, "tuple");
  c->set_root_instruction(tuple);
  OpMetadata md;
  md.op_name = "jit(f)/dot";
  dot->set_metadata(md);
  m->AddComputation(std::move(e), true);
  ComputationLayout layout;
  layout.parameters = {F32({4, 8}), F32({8, 16})};
  layout.result = tuple->shape();
  m->mutable_config()->entry_computation_layout = layout;
  return m;
}

// Picks a random element of `pending` whose dependencies are all in `done`
// (any element when `any_order`), removes and returns it.
template <typename T, typename Deps>
T PickReady(std::vector<T>& pending, const Deps& deps_done, bool any_order,
            std::mt19937_64& rng) {
  std::vector<size_t> ready;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (any_order || deps_done(pending[i])) ready.push_back(i);
  }
  const size_t pick = ready[rng() % ready.size()];
  T t = pending[pick];
  pending.erase(pending.begin() + pick);
  return t;
}

// Copies `m` into a new module, adding computations and instructions in a
// random order: callee-first and topological if `topological`, otherwise
// any order at all (the IR allows it; the text format does not).
std::unique_ptr<Module> ShuffledClone(const Module& m, uint64_t seed,
                                      bool topological = true) {
  std::mt19937_64 rng(seed);
  auto out = std::make_unique<Module>(m.name());
  *out->mutable_config() = m.config();
  // Create the computations first so calls can be remapped in any order.
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>> fresh;
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  for (const auto& c : m.computations()) {
    auto nc = std::make_unique<Computation>(c->name());
    nc->set_execution_thread(c->execution_thread());
    nc->set_is_fusion_computation(c->IsFusionComputation());
    comp_map[c.get()] = nc.get();
    fresh[c.get()] = std::move(nc);
  }
  for (const auto& c : m.computations()) {
    Computation* nc = comp_map[c.get()];
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    std::vector<std::unique_ptr<Instruction>> made;
    for (Instruction* old : c->instructions()) {
      auto n = old->CloneWithNewOperands({});
      std::vector<Computation*> callees;
      for (Computation* callee : old->called_computations()) {
        callees.push_back(comp_map.at(callee));
      }
      n->set_called_computations(callees);
      map[old] = n.get();
      made.push_back(std::move(n));
    }
    for (Instruction* old : c->instructions()) {
      for (Instruction* op : old->operands()) map[old]->AppendOperand(map[op]);
    }
    absl::flat_hash_map<const Instruction*, std::unique_ptr<Instruction>> owned;
    for (auto& n : made) owned[n.get()] = std::move(n);
    std::vector<Instruction*> pending = c->instructions();
    absl::flat_hash_map<const Instruction*, bool> added;
    auto deps_done = [&](Instruction* old) {
      for (Instruction* op : old->operands()) {
        if (!added.contains(op)) return false;
      }
      for (Instruction* op : old->control_predecessors()) {
        if (!added.contains(op)) return false;
      }
      return true;
    };
    while (!pending.empty()) {
      Instruction* old = PickReady(pending, deps_done, !topological, rng);
      nc->AddInstruction(std::move(owned[map[old]]));
      added[old] = true;
    }
    for (Instruction* old : c->instructions()) {
      for (Instruction* p : old->control_predecessors()) {
        EXPECT_TRUE(map[p]->AddControlDependencyTo(map[old]).ok());
      }
    }
    nc->set_root_instruction(map[c->root_instruction()]);
  }
  std::vector<const Computation*> pending;
  for (const auto& c : m.computations()) pending.push_back(c.get());
  absl::flat_hash_map<const Computation*, bool> placed;
  auto callees_done = [&](const Computation* c) {
    bool ok = true;
    c->ForEachInstruction([&](Instruction* inst) {
      for (Computation* callee : inst->called_computations()) {
        if (!placed.contains(callee)) ok = false;
      }
    });
    return ok;
  };
  while (!pending.empty()) {
    const Computation* c = PickReady(pending, callees_done, !topological, rng);
    out->AddComputation(std::move(fresh[c]), c == m.entry_computation());
    placed[c] = true;
  }
  return out;
}

void RenameAll(Module* m) {
  int i = 0;
  for (const auto& c : m->computations()) {
    c->set_name(StrCat("comp_", i++));
    c->ForEachInstruction(
        [&](Instruction* inst) { inst->set_name(StrCat("x", i++)); });
  }
  m->set_name("renamed");
}

Computation* Entry(Module* m) { return m->entry_computation(); }
Instruction* Find(Module* m, std::string_view name) {
  for (const auto& c : m->computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

TEST(DagHashTest, DeterministicAcrossBuilds) {
  auto a = BuildModule();
  auto b = BuildModule();
  EXPECT_EQ(DagHash(*a), DagHash(*b));
  EXPECT_EQ(DagHash(*a), DagHash(*a));
  EXPECT_NE(DagHash(*a), 0u);
}

TEST(DagHashTest, GoldenValue) {
  // Pins the hash across platforms and builds. If the hash definition is
  // changed on purpose, update the constant.
  auto m = std::make_unique<Module>("m");
  auto e = std::make_unique<Computation>("e");
  Instruction* p = Param(e.get(), 0, F32({2, 3}), "p");
  e->set_root_instruction(Add(e.get(), Opcode::kNegate, F32({2, 3}), {p}, "n"));
  m->AddComputation(std::move(e), true);
  EXPECT_EQ(DagHash(*m), 0xe54931e1c366794u) << std::hex << DagHash(*m);
}

TEST(DagHashTest, IgnoresNamesIdsAndMetadata) {
  auto a = BuildModule();
  auto b = BuildModule();
  RenameAll(b.get());
  EXPECT_EQ(DagHash(*a), DagHash(*b));
  OpMetadata md;
  md.op_name = "something/else";
  md.source_line = 99;
  Find(b.get(), "x1") ? Find(b.get(), "x1")->set_metadata(md) : void();
  Entry(b.get())->root_instruction()->set_metadata(md);
  Entry(b.get())->root_instruction()->set_source_location(12, 3);
  Entry(b.get())->root_instruction()->set_unique_id(12345);
  EXPECT_EQ(DagHash(*a), DagHash(*b));
  // A schedule is only an order, and debug tables are like metadata.
  b->mutable_config()->is_scheduled = true;
  b->mutable_config()->stack_frames = "FileNames\n1 \"a.py\"";
  EXPECT_EQ(DagHash(*a), DagHash(*b));
}

TEST(DagHashTest, IgnoresInstructionAndComputationOrder) {
  auto a = BuildModule();
  const uint64_t h = DagHash(*a);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto b = ShuffledClone(*a, seed);
    RenameAll(b.get());
    EXPECT_EQ(DagHash(*b), h) << "seed " << seed;
    // Users before operands, callers before callees.
    auto c = ShuffledClone(*a, seed, /*topological=*/false);
    EXPECT_EQ(DagHash(*c), h) << "seed " << seed;
    EXPECT_EQ(DagHash(*c->entry_computation()),
              DagHash(*a->entry_computation()));
  }
}

TEST(DagHashTest, CloneHasEqualHash) {
  auto a = BuildModule();
  auto b = a->Clone();
  EXPECT_EQ(DagHash(*a), DagHash(*b));
  EXPECT_EQ(DagHash(*Entry(a.get())), DagHash(*Entry(b.get())));
  // Copy-on-write: changing the clone leaves the original's hash alone.
  const uint64_t before = DagHash(*a);
  Find(b.get(), "dot")->mutable_attrs()->dot_dnums->lhs_contracting_dimensions =
      {0};
  EXPECT_EQ(DagHash(*a), before);
  EXPECT_NE(DagHash(*b), before);
}

// One change of each kind the hash sees, applied to BuildModule().
using Mutation = std::pair<std::string, std::function<void(Module*)>>;
std::vector<Mutation> Mutations() {
  return {
      {"broadcast dims",
       [](Module* m) { Find(m, "broadcast")->set_dimensions({1}); }},
      {"reduce dims",
       [](Module* m) { Find(m, "reduce")->set_dimensions({0}); }},
      {"compare direction",
       [](Module* m) {
         Find(m, "compare")->set_comparison_direction(ComparisonDirection::kGe);
       }},
      {"compare type",
       [](Module* m) {
         Find(m, "compare")->set_comparison_type(ComparisonType::kTotalOrder);
       }},
      {"constant value",
       [](Module* m) {
         Literal lit(F32({}));
         lit.SetFromDouble(0, 1.0);
         Find(m, "zero")->set_literal(std::move(lit));
       }},
      {"constant -0",
       [](Module* m) {
         Literal lit(F32({}));
         lit.SetFromDouble(0, -0.0);
         Find(m, "zero")->set_literal(std::move(lit));
       }},
      {"swap subtract operands",
       [](Module* m) {
         Instruction* s = Find(m, "subtract.1");
         Instruction* p1 = Find(m, "p0");
         Instruction* f = Find(m, "f");
         // subtract(p0, p0) -> fusion(p0, p0) keeps shapes; swap the
         // fusion's operands instead: fusion(sub, p0).
         ASSERT_TRUE(f->ReplaceOperandWith(0, s).ok());
         ASSERT_TRUE(f->ReplaceOperandWith(1, p1).ok());
       }},
      {"select operand order",
       [](Module* m) {
         Instruction* sel = Find(m, "select");
         Instruction* a = sel->operand(1);
         Instruction* b = sel->operand(2);
         ASSERT_TRUE(sel->ReplaceOperandWith(1, b).ok());
         ASSERT_TRUE(sel->ReplaceOperandWith(2, a).ok());
       }},
      {"layout",
       [](Module* m) {
         Find(m, "dot")->mutable_shape()->mutable_layout()->minor_to_major = {
             0, 1};
       }},
      {"layout tile",
       [](Module* m) {
         Find(m, "dot")
             ->mutable_shape()
             ->mutable_layout()
             ->mutable_tail()
             .tiles.push_back(Tile{{8, 128}});
       }},
      {"layout memory space",
       [](Module* m) {
         Find(m, "dot")
             ->mutable_shape()
             ->mutable_layout()
             ->mutable_tail()
             .memory_space = 1;
       }},
      {"layout element size",
       [](Module* m) {
         Find(m, "dot")
             ->mutable_shape()
             ->mutable_layout()
             ->mutable_tail()
             .element_size_in_bits = 4;
       }},
      {"no layout",
       [](Module* m) { Find(m, "dot")->mutable_shape()->clear_layout(); }},
      {"element type",
       [](Module* m) {
         Find(m, "slice")
             ->mutable_shape()
             ->set_element_type(PrimitiveType::kBF16);
       }},
      {"dimension size",
       [](Module* m) {
         Find(m, "slice")->mutable_shape()->set_dimensions(0, 3);
       }},
      {"dynamic dimension",
       [](Module* m) {
         Find(m, "slice")->mutable_shape()->set_dynamic_dimension(0, true);
       }},
      {"backend config",
       [](Module* m) { Find(m, "cc")->set_backend_config("{\"k\":2}"); }},
      {"frontend attributes",
       [](Module* m) {
         Find(m, "cc")->set_frontend_attributes({{"_xla_stream", "1", false}});
       }},
      {"custom call target",
       [](Module* m) {
         Find(m, "cc")->mutable_attrs()->custom_call_target = "Other";
       }},
      {"side effect",
       [](Module* m) {
         Find(m, "cc")->mutable_attrs()->custom_call_has_side_effect = true;
       }},
      {"sharding",
       [](Module* m) {
         Sharding s;
         s.kind = Sharding::Kind::kMaximal;
         s.device = 0;
         Find(m, "cc")->mutable_attrs()->sharding = s;
       }},
      {"sharding device",
       [](Module* m) {
         Sharding s;
         s.kind = Sharding::Kind::kMaximal;
         s.device = 1;
         Find(m, "cc")->mutable_attrs()->sharding = s;
       }},
      {"replica groups",
       [](Module* m) {
         ReplicaGroups g;
         g.groups = {{0, 1}};
         Find(m, "cc")->mutable_attrs()->replica_groups = g;
       }},
      {"channel id",
       [](Module* m) { Find(m, "cc")->mutable_attrs()->channel_id = 3; }},
      {"unknown attribute",
       [](Module* m) {
         Find(m, "cc")->mutable_attrs()->unknown.push_back({"foo", "bar"});
       }},
      {"dot dnums",
       [](Module* m) {
         Find(m, "dot")->mutable_attrs()->dot_dnums->lhs_batch_dimensions = {};
         Find(m, "dot")->mutable_attrs()->operand_precision = {
             Precision::kHighest, Precision::kHighest};
       }},
      {"slice",
       [](Module* m) {
         Find(m, "slice")->mutable_attrs()->slice[0].start = 1;
       }},
      {"slice stride",
       [](Module* m) {
         Find(m, "slice")->mutable_attrs()->slice[1].stride = 2;
       }},
      {"window",
       [](Module* m) {
         Window w;
         w.dimensions.resize(2);
         Find(m, "cc")->mutable_attrs()->window = w;
       }},
      {"padding",
       [](Module* m) {
         Find(m, "cc")->mutable_attrs()->padding = {{0, 1, 0}};
       }},
      {"fusion kind",
       [](Module* m) { Find(m, "f")->set_fusion_kind(FusionKind::kInput); }},
      {"fused computation",
       [](Module* m) {
         Instruction* mul = Find(m, "multiply.0");
         Instruction* root = mul->parent()->root_instruction();
         auto sub = Make(Opcode::kSubtract, F32({4, 8}),
                         {mul->operand(0), mul->operand(1)}, "sub.0");
         Instruction* s = mul->parent()->AddInstruction(std::move(sub));
         ASSERT_TRUE(root->ReplaceOperandWith(0, s).ok());
         ASSERT_TRUE(mul->parent()->RemoveInstruction(mul).ok());
       }},
      {"to_apply computation",
       [](Module* m) {
         Instruction* r = Find(m, "r");
         Computation* region = r->parent();
         Instruction* mx = Add(region, Opcode::kMaximum, F32({}),
                               {r->operand(0), r->operand(1)}, "mx");
         region->set_root_instruction(mx);
         ASSERT_TRUE(region->RemoveInstruction(r).ok());
       }},
      {"control dependency",
       [](Module* m) {
         ASSERT_TRUE(
             Find(m, "zero")->AddControlDependencyTo(Find(m, "dot")).ok());
       }},
      {"dead instruction",
       [](Module* m) {
         Add(Entry(m), Opcode::kNegate, F32({4, 8}), {Find(m, "p0")}, "dead");
       }},
      {"dead constant",
       [](Module* m) { ScalarConstant(Entry(m), 7.0f, "dead_k"); }},
      {"root",
       [](Module* m) { Entry(m)->set_root_instruction(Find(m, "slice")); }},
      {"parameter shape",
       [](Module* m) {
         Find(m, "p0")->mutable_shape()->mutable_layout()->minor_to_major = {0,
                                                                             1};
       }},
      {"parameter number",
       [](Module* m) {
         Find(m, "lhs")->set_int_attr(1);
         Find(m, "rhs")->set_int_attr(0);
       }},
      {"entry layout",
       [](Module* m) {
         m->mutable_config()
             ->entry_computation_layout->parameters[0]
             .mutable_layout()
             ->minor_to_major = {0, 1};
       }},
      {"replica count",
       [](Module* m) { m->mutable_config()->replica_count = 2; }},
      {"num partitions",
       [](Module* m) { m->mutable_config()->num_partitions = 2; }},
      {"input output alias",
       [](Module* m) {
         m->mutable_config()->input_output_alias =
             std::vector<InputOutputAlias>{{{0}, 0, {}}};
       }},
      {"execution thread",
       [](Module* m) { Find(m, "r")->parent()->set_execution_thread("host"); }},
      {"unused computation",
       [](Module* m) {
         m->AddComputation(BinaryRegion("unused", Opcode::kMultiply), false);
       }},
  };
}

// Each mutation must change the hash, and all results must differ.
TEST(DagHashTest, EverySingleChangeChangesHash) {
  const std::vector<Mutation> mutations = Mutations();
  auto base = BuildModule();
  const uint64_t h0 = DagHash(*base);
  absl::flat_hash_map<uint64_t, std::string> seen = {{h0, "original"}};
  for (const auto& [what, mutate] : mutations) {
    auto m = BuildModule();
    mutate(m.get());
    const uint64_t h = DagHash(*m);
    EXPECT_NE(h, h0) << what;
    auto [it, inserted] = seen.emplace(h, what);
    EXPECT_TRUE(inserted) << what << " collides with " << it->second;
    // The change must survive a clone and a shuffle too.
    EXPECT_EQ(DagHash(*m->Clone()), h) << what;
    EXPECT_EQ(DagHash(*ShuffledClone(*m, 7)), h) << what;
    EXPECT_EQ(DagHash(*ShuffledClone(*m, 8, false)), h) << what;
  }
}

TEST(DagHashTest, DistinguishesSharing) {
  // add(p,p) twice vs once (CSE'd): same tree, different graphs.
  auto build = [](bool cse) {
    auto m = std::make_unique<Module>("m");
    auto e = std::make_unique<Computation>("e");
    Instruction* p = Param(e.get(), 0, F32({4}), "p");
    Instruction* a = Add(e.get(), Opcode::kAdd, F32({4}), {p, p}, "a");
    Instruction* b =
        cse ? a : Add(e.get(), Opcode::kAdd, F32({4}), {p, p}, "b");
    e->set_root_instruction(
        Add(e.get(), Opcode::kMultiply, F32({4}), {a, b}, "m"));
    m->AddComputation(std::move(e), true);
    return m;
  };
  EXPECT_NE(DagHash(*build(true)), DagHash(*build(false)));
}

std::unique_ptr<Module> AlternativesModule(std::vector<int> order,
                                           Opcode third = Opcode::kExp) {
  auto m = std::make_unique<Module>("m");
  auto e = std::make_unique<Computation>("e");
  Instruction* p = Param(e.get(), 0, F32({4}), "p");
  std::vector<Instruction*> cands = {
      Add(e.get(), Opcode::kNegate, F32({4}), {p}, "c0"),
      Add(e.get(), Opcode::kAbs, F32({4}), {p}, "c1"),
      Add(e.get(), third, F32({4}), {p}, "c2"),
  };
  std::vector<Instruction*> ops;
  for (int i : order) ops.push_back(cands[i]);
  Instruction* alt = Add(e.get(), Opcode::kAlternatives, F32({4}), ops, "alt");
  e->set_root_instruction(Add(e.get(), Opcode::kTanh, F32({4}), {alt}, "root"));
  m->AddComputation(std::move(e), true);
  return m;
}

TEST(DagHashTest, AlternativesOperandsAreUnordered) {
  const uint64_t h = DagHash(*AlternativesModule({0, 1, 2}));
  EXPECT_EQ(DagHash(*AlternativesModule({2, 0, 1})), h);
  EXPECT_EQ(DagHash(*AlternativesModule({1, 2, 0})), h);
  EXPECT_NE(DagHash(*AlternativesModule({0, 1, 2}, Opcode::kLog)), h);
  EXPECT_NE(DagHash(*AlternativesModule({0, 1})), h);
  // Ordinary variadic ops keep operand order.
  auto t1 = AlternativesModule({0, 1, 2});
  auto t2 = AlternativesModule({0, 1, 2});
  Instruction* alt2 = Find(t2.get(), "alt");
  Instruction* c0 = alt2->operand(0);
  Instruction* c1 = alt2->operand(1);
  ASSERT_TRUE(alt2->ReplaceOperandWith(0, c1).ok());
  ASSERT_TRUE(alt2->ReplaceOperandWith(1, c0).ok());
  EXPECT_EQ(DagHash(*t1), DagHash(*t2));
}

TEST(DagHashTest, ControlPredecessorsAreUnordered) {
  auto build = [](bool reversed) {
    auto m = std::make_unique<Module>("m");
    auto e = std::make_unique<Computation>("e");
    Instruction* p = Param(e.get(), 0, F32({4}), "p");
    Instruction* a = Add(e.get(), Opcode::kNegate, F32({4}), {p}, "a");
    Instruction* b = Add(e.get(), Opcode::kAbs, F32({4}), {p}, "b");
    Instruction* r = Add(e.get(), Opcode::kExp, F32({4}), {p}, "r");
    if (reversed) std::swap(a, b);
    EXPECT_TRUE(a->AddControlDependencyTo(r).ok());
    EXPECT_TRUE(b->AddControlDependencyTo(r).ok());
    e->set_root_instruction(r);
    m->AddComputation(std::move(e), true);
    return m;
  };
  EXPECT_EQ(DagHash(*build(false)), DagHash(*build(true)));
  auto no_deps = build(false);
  Instruction* r = Entry(no_deps.get())->root_instruction();
  r->DropAllControlDeps();
  EXPECT_NE(DagHash(*no_deps), DagHash(*build(false)));
}

// A chain p -> op[0] -> op[1] -> ... -> root (op list from the root down).
std::unique_ptr<Module> Chain(const std::vector<Opcode>& from_root) {
  auto m = std::make_unique<Module>("m");
  auto e = std::make_unique<Computation>("e");
  Instruction* cur = Param(e.get(), 0, F32({4}), "p");
  for (auto it = from_root.rbegin(); it != from_root.rend(); ++it) {
    cur = Add(e.get(), *it, F32({4}), {cur}, "n");
  }
  e->set_root_instruction(cur);
  m->AddComputation(std::move(e), true);
  return m;
}

TEST(DagHashTest, HopsHashOnlySeesHopsLevels) {
  using O = Opcode;
  auto a = Chain({O::kNegate, O::kAbs, O::kExp, O::kLog});
  auto b = Chain({O::kNegate, O::kAbs, O::kExp, O::kTanh});
  const Instruction& ra = *Entry(a.get())->root_instruction();
  const Instruction& rb = *Entry(b.get())->root_instruction();
  // The chains differ 3 levels below the root.
  for (int k = 0; k <= 2; ++k) {
    EXPECT_EQ(InstructionHash(ra, k), InstructionHash(rb, k)) << k;
  }
  for (int k : {3, 4, 5, 10, -1}) {
    EXPECT_NE(InstructionHash(ra, k), InstructionHash(rb, k)) << k;
  }
  // Hops beyond the cone's height give the whole-cone hash.
  EXPECT_EQ(InstructionHash(ra, 4), InstructionHash(ra, -1));
  EXPECT_EQ(InstructionHash(ra, 100), InstructionHash(ra, -1));
  EXPECT_EQ(InstructionHash(ra, std::numeric_limits<int>::max()),
            InstructionHash(ra, -1));
  EXPECT_NE(InstructionHash(ra, 3), InstructionHash(ra, -1));
  // Distinct k give distinct values while the cone is cut.
  EXPECT_NE(InstructionHash(ra, 0), InstructionHash(ra, 1));
  // The local hash ignores operands entirely.
  EXPECT_EQ(LocalInstructionHash(ra), LocalInstructionHash(rb));
  EXPECT_NE(
      LocalInstructionHash(ra),
      LocalInstructionHash(*Entry(a.get())->root_instruction()->operand(0)));
}

TEST(DagHashTest, HopsHashOnDiamond) {
  // r = add(neg(p), abs(p)): both paths reach p at 2 hops.
  auto build = [](Opcode leaf_user) {
    auto m = std::make_unique<Module>("m");
    auto e = std::make_unique<Computation>("e");
    Instruction* p = Param(e.get(), 0, F32({4}), "p");
    Instruction* x = Add(e.get(), leaf_user, F32({4}), {p}, "x");
    Instruction* a = Add(e.get(), Opcode::kNegate, F32({4}), {x}, "a");
    Instruction* b = Add(e.get(), Opcode::kAbs, F32({4}), {a}, "b");
    e->set_root_instruction(Add(e.get(), Opcode::kAdd, F32({4}), {a, b}, "r"));
    m->AddComputation(std::move(e), true);
    return m;
  };
  auto m1 = build(Opcode::kExp);
  auto m2 = build(Opcode::kLog);
  const Instruction& r1 = *Entry(m1.get())->root_instruction();
  const Instruction& r2 = *Entry(m2.get())->root_instruction();
  // x is 2 hops from r via a and 3 via b, so it is needed with two budgets;
  // k=1 stops above it, k=2 sees it (alone) on the short path.
  EXPECT_EQ(InstructionHash(r1, 0), InstructionHash(r2, 0));
  EXPECT_EQ(InstructionHash(r1, 1), InstructionHash(r2, 1));
  EXPECT_NE(InstructionHash(r1, 2), InstructionHash(r2, 2));
  EXPECT_NE(InstructionHash(r1, 3), InstructionHash(r2, 3));
  EXPECT_EQ(InstructionHash(r1, 10), InstructionHash(r1, -1));
}

TEST(DagHashTest, ConeHashIgnoresOutsideOfCone) {
  auto a = BuildModule();
  auto b = BuildModule();
  Add(Entry(b.get()), Opcode::kNegate, F32({4, 8}), {Find(b.get(), "p0")},
      "extra");
  EXPECT_EQ(InstructionHash(*Find(a.get(), "select")),
            InstructionHash(*Find(b.get(), "select")));
  EXPECT_NE(DagHash(*a), DagHash(*b));
}

TEST(DagHashTest, ComputationHashIncludesCallees) {
  auto a = BuildModule();
  auto b = BuildModule();
  EXPECT_EQ(DagHash(*Entry(a.get())), DagHash(*Entry(b.get())));
  Find(b.get(), "exponential.0")
      ->mutable_shape()
      ->mutable_layout()
      ->mutable_tail()
      .memory_space = 2;
  EXPECT_NE(DagHash(*Entry(a.get())), DagHash(*Entry(b.get())));
  EXPECT_NE(LocalInstructionHash(*Find(a.get(), "f")),
            LocalInstructionHash(*Find(b.get(), "f")));
}

TEST(DagHashTest, ShallowHashSeesCalleeSizeAndRootOnly) {
  auto a = BuildModule();
  auto b = BuildModule();
  const Instruction& fa = *Find(a.get(), "f");
  Instruction* fb = Find(b.get(), "f");
  EXPECT_EQ(ShallowInstructionHash(fa), ShallowInstructionHash(*fb));
  // A change below the callee's root: invisible to the shallow hash.
  Find(b.get(), "multiply.0")
      ->mutable_shape()
      ->mutable_layout()
      ->mutable_tail()
      .memory_space = 2;
  EXPECT_EQ(ShallowInstructionHash(fa), ShallowInstructionHash(*fb));
  EXPECT_NE(LocalInstructionHash(fa), LocalInstructionHash(*fb));
  // One more callee instruction, or the instruction's own attributes: seen.
  Add(fb->called_computations()[0], Opcode::kNegate, F32({4, 8}),
      {fb->called_computations()[0]->parameter_instruction(0)}, "extra");
  EXPECT_NE(ShallowInstructionHash(fa), ShallowInstructionHash(*fb));
  auto c = BuildModule();
  Instruction* fc = Find(c.get(), "f");
  fc->set_fusion_kind(FusionKind::kInput);
  EXPECT_NE(ShallowInstructionHash(fa), ShallowInstructionHash(*fc));
}

TEST(DagHashTest, DeepGraphsDoNotOverflowTheStack) {
  constexpr int kDepth = 200000;
  auto m = std::make_unique<Module>("deep");
  auto e = std::make_unique<Computation>("e");
  Instruction* cur = Param(e.get(), 0, F32({}), "p");
  for (int i = 0; i < kDepth; ++i) {
    cur = Add(e.get(), i % 2 ? Opcode::kNegate : Opcode::kAbs, F32({}), {cur},
              "n");
  }
  e->set_root_instruction(cur);
  m->AddComputation(std::move(e), true);
  const uint64_t h = DagHash(*m);
  EXPECT_EQ(DagHash(*m->Clone()), h);
  EXPECT_NE(InstructionHash(*cur, -1), InstructionHash(*cur, 3));
  EXPECT_EQ(InstructionHash(*cur, 3),
            InstructionHash(*cur->operand(0)->operand(0), 3));
}

constexpr char kText[] = R"(
HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0})->f32[4]{0}}

%region_0.3 (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {
  %Arg_0.4 = f32[] parameter(0)
  %Arg_1.5 = f32[] parameter(1)
  ROOT %add.6 = f32[] add(f32[] %Arg_0.4, f32[] %Arg_1.5)
}

ENTRY %main.10 (Arg_0.1: f32[4,8], Arg_1.2: f32[8]) -> f32[4] {
  %Arg_0.1 = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}
  %Arg_1.2 = f32[8]{0} parameter(1)
  %broadcast.7 = f32[4,8]{1,0} broadcast(f32[8]{0} %Arg_1.2), dimensions={1}
  %subtract.8 = f32[4,8]{1,0} subtract(f32[4,8]{1,0} %Arg_0.1, f32[4,8]{1,0} %broadcast.7)
  %constant.9 = f32[] constant(0)
  ROOT %reduce.11 = f32[4]{0} reduce(f32[4,8]{1,0} %subtract.8, f32[] %constant.9), dimensions={1}, to_apply=%region_0.3
}
)";

// The same graph: other names, another valid order, no metadata.
constexpr char kRenamedText[] = R"(
HloModule other, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0})->f32[4]{0}}

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  zero = f32[] constant(0)
  y = f32[8]{0} parameter(1)
  by = f32[4,8]{1,0} broadcast(y), dimensions={1}
  x = f32[4,8]{1,0} parameter(0)
  d = f32[4,8]{1,0} subtract(x, by)
  ROOT r = f32[4]{0} reduce(d, zero), dimensions={1}, to_apply=sum
}
)";

std::unique_ptr<Module> MustParse(std::string_view text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : std::make_unique<Module>("invalid");
}

std::string Replace(std::string s, std::string_view from, std::string_view to) {
  const size_t pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

// DagHash remembers each computation's hash until the computation changes.
// Hashing before a change must not change what is hashed after it: the
// module hashed before and after each mutation (and its clone, which copies
// the memos) must hash as the same mutation of a module never hashed.
TEST(DagHashTest, MemoFollowsEveryChange) {
  for (const auto& [what, mutate] : Mutations()) {
    auto fresh = BuildModule();
    mutate(fresh.get());
    const uint64_t expected = DagHash(*fresh);

    auto m = BuildModule();
    const uint64_t before = DagHash(*m);
    auto clone = m->Clone();
    mutate(m.get());
    EXPECT_EQ(DagHash(*m), expected) << what;
    EXPECT_EQ(DagHash(*m), expected) << what << " (hashed twice)";
    // The clone was made with valid memos: it hashes as before until it
    // is changed the same way.
    EXPECT_EQ(DagHash(*clone), before) << what;
    mutate(clone.get());
    EXPECT_EQ(DagHash(*clone), expected) << what << " (clone)";
  }
}

TEST(DagHashParsedTest, NamesOrderAndMetadataDoNotMatter) {
  auto a = MustParse(kText);
  auto b = MustParse(kRenamedText);
  EXPECT_EQ(DagHash(*a), DagHash(*b));
}

TEST(DagHashParsedTest, PrintParseRoundTripKeepsTheHash) {
  auto a = MustParse(kText);
  auto b = MustParse(PrintModule(*a));
  EXPECT_EQ(DagHash(*a), DagHash(*b));
}

TEST(DagHashParsedTest, TextChangesChangeTheHash) {
  const uint64_t h = DagHash(*MustParse(kText));
  const std::string text = kText;
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"dimensions={1}, to_apply", "dimensions={0}, to_apply"},
      {"subtract(f32[4,8]{1,0} %Arg_0.1, f32[4,8]{1,0} %broadcast.7)",
       "subtract(f32[4,8]{1,0} %broadcast.7, f32[4,8]{1,0} %Arg_0.1)"},
      {"constant(0)", "constant(1)"},
      {"ROOT %add.6 = f32[] add", "ROOT %add.6 = f32[] maximum"},
      {"%subtract.8 = f32[4,8]{1,0}", "%subtract.8 = f32[4,8]{0,1}"},
      {"f32[8]{0})->f32[4]{0}}", "f32[8]{0})->f32[4]{0:S(1)}}"},
      {"%Arg_1.2 = f32[8]{0} parameter(1)",
       "%Arg_1.2 = f32[8]{0} parameter(1), sharding={replicated}"},
      {"%constant.9 = f32[] constant(0)",
       "%constant.9 = f32[] constant(0), backend_config=\"x\""},
  };
  for (const auto& [from, to] : edits) {
    EXPECT_NE(DagHash(*MustParse(Replace(text, from, to))), h) << to;
  }
}

// A change two calls down (entry -> fusion -> reduce -> sum) reaches the
// memos of every caller above it.
TEST(DagHashParsedTest, MemoSeesChangesInNestedCallees) {
  constexpr char kNested[] = R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  x = f32[4,8] parameter(0)
  e = f32[4,8] exponential(x)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(e, z), dimensions={1}, to_apply=sum
}
ENTRY main {
  p = f32[4,8] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kInput, calls=fused
}
)";
  auto m = MustParse(kNested);
  auto fresh = MustParse(kNested);
  const uint64_t before = DagHash(*m);
  EXPECT_EQ(DagHash(*m), before);
  for (Module* x : {m.get(), fresh.get()}) {
    Instruction* add = Find(x, "s");
    Computation* sum = add->parent();
    auto mx = std::make_unique<Instruction>(Opcode::kMaximum, add->shape());
    mx->AppendOperand(add->operand(0));
    mx->AppendOperand(add->operand(1));
    mx->set_name("mx");
    sum->set_root_instruction(sum->AddInstruction(std::move(mx)));
    ASSERT_TRUE(sum->RemoveInstruction(add).ok());
  }
  EXPECT_NE(DagHash(*m), before);
  EXPECT_EQ(DagHash(*m), DagHash(*fresh));
  EXPECT_EQ(DagHash(*Find(m.get(), "f")->parent()),
            DagHash(*Find(fresh.get(), "f")->parent()));
}

TEST(DagHashParsedTest, AlternativesInText) {
  constexpr char kAlt[] = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] abs(p)
  ROOT alt = f32[4] alternatives(a, b)
}
)";
  auto m1 = ParseModule(kAlt);
  if (!m1.ok()) GTEST_SKIP() << "parser does not accept alternatives yet";
  auto m2 =
      MustParse(Replace(kAlt, "alternatives(a, b)", "alternatives(b, a)"));
  EXPECT_EQ(DagHash(**m1), DagHash(*m2));
}

}  // namespace
}  // namespace hlogym
