// Tests of computations and modules: mutation keeps edges consistent,
// clone, dead-code removal, post-orders, reachability, names.
#include "hlogym/ir/module.h"

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

// Every operand edge has exactly one matching user entry and vice versa.
void ExpectConsistentEdges(const Module& m) {
  for (const auto& c : m.computations()) {
    c->ForEachInstruction([&](Instruction* i) {
      EXPECT_EQ(i->parent(), c.get()) << i->name();
      for (Instruction* op : i->operands()) {
        EXPECT_EQ(std::count(op->users().begin(), op->users().end(), i), 1)
            << i->name() << " is not listed once among the users of "
            << op->name();
      }
      for (Instruction* u : i->users()) {
        EXPECT_TRUE(u->IsUserOf(i))
            << u->name() << " lists no edge from " << i->name();
      }
      for (Instruction* p : i->control_predecessors()) {
        const auto& s = p->control_successors();
        EXPECT_EQ(std::count(s.begin(), s.end(), i), 1);
      }
    });
  }
}

constexpr char kModule[] = R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  m = f32[4] multiply(p, p)
  n = f32[4] add(m, q), control-predecessors={m}
  dead = f32[4] negate(n)
  dead2 = f32[4] exponential(dead)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=sum
}
)";

TEST(ModuleTest, EdgesAfterParse) {
  auto m = Parse(kModule);
  ExpectConsistentEdges(*m);
  Instruction* p = m->entry_computation()->FindInstruction("p");
  ASSERT_NE(p, nullptr);
  // multiply(p, p) is one user, listed once.
  EXPECT_EQ(p->user_count(), 1);
  EXPECT_EQ(m->instruction_count(), 11);
  EXPECT_EQ(m->computation_count(), 2);
}

TEST(ModuleTest, CloneIsDeepAndEqual) {
  auto m = Parse(kModule);
  auto c = m->Clone();
  ExpectConsistentEdges(*c);
  EXPECT_EQ(PrintModule(*m), PrintModule(*c));
  EXPECT_EQ(DagHash(*m), DagHash(*c));
  EXPECT_TRUE(VerifyModule(*c).ok());
  // No pointer is shared between the two graphs.
  std::set<const void*> original;
  for (const auto& comp : m->computations()) {
    original.insert(comp.get());
    comp->ForEachInstruction([&](Instruction* i) { original.insert(i); });
  }
  for (const auto& comp : c->computations()) {
    EXPECT_FALSE(original.count(comp.get()));
    comp->ForEachInstruction([&](Instruction* i) {
      EXPECT_FALSE(original.count(i));
      EXPECT_EQ(i->parent(), comp.get());
      for (Instruction* op : i->operands()) EXPECT_FALSE(original.count(op));
      for (Computation* callee : i->called_computations()) {
        EXPECT_FALSE(original.count(callee));
      }
    });
  }
  // Mutating the clone leaves the original alone (copy-on-write attributes).
  Instruction* r = c->entry_computation()->root_instruction();
  r->set_dimensions({});
  r->mutable_attrs()->unknown.emplace_back("x", "1");
  EXPECT_EQ(m->entry_computation()->root_instruction()->dimensions().size(),
            1u);
  EXPECT_TRUE(
      m->entry_computation()->root_instruction()->attrs().unknown.empty());
}

TEST(ModuleTest, CloneOfModuleWithRemovedInstructions) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  ASSERT_TRUE(e->RemoveInstruction(e->FindInstruction("dead2")).ok());
  auto c = m->Clone();
  ExpectConsistentEdges(*c);
  EXPECT_EQ(c->instruction_count(), 10);
  EXPECT_EQ(PrintModule(*m), PrintModule(*c));
}

TEST(ModuleTest, RemoveInstructionRules) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  absl::Status s = e->RemoveInstruction(e->FindInstruction("n"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("still has 2 user(s)"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(e->RemoveInstruction(e->root_instruction()).ok());
  EXPECT_FALSE(e->RemoveInstruction(e->FindInstruction("p")).ok());
  // Removing dead2 then its now-unused operand chain.
  ASSERT_TRUE(
      e->RemoveInstructionAndUnusedOperands(e->FindInstruction("dead2")).ok());
  EXPECT_EQ(e->FindInstruction("dead"), nullptr);
  EXPECT_NE(e->FindInstruction("n"), nullptr);
  ExpectConsistentEdges(*m);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// Detached instructions join the graph in unique-id order, with their
// operand edges; the others are deleted and leave no edge behind.
TEST(ModuleTest, AttachDetachedIfKeepsIdOrderAndDropsTheRest) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  Instruction* p = e->FindInstruction("p");
  Instruction* q = e->FindInstruction("q");
  const int64_t users_p = p->user_count();
  auto make = [&](Opcode op, std::vector<Instruction*> operands,
                  std::string name) {
    auto i = std::make_unique<Instruction>(op, p->shape());
    for (Instruction* o : operands) i->AppendOperand(o);
    i->set_name(std::move(name));
    return e->AddDetachedInstruction(std::move(i));
  };
  Instruction* a = make(Opcode::kNegate, {p}, "det_a");
  Instruction* b = make(Opcode::kAdd, {a, q}, "det_b");
  Instruction* c = make(Opcode::kExp, {p}, "det_c");
  Instruction* d = make(Opcode::kAbs, {b}, "det_d");
  ASSERT_EQ(e->detached_instruction_count(), 4);
  EXPECT_EQ(p->user_count(), users_p);  // detached: not users yet
  int64_t visited = 0;
  e->ForEachDetachedInstruction([&](Instruction*) { ++visited; });
  EXPECT_EQ(visited, 4);
  const int64_t before = e->instruction_count();
  e->AttachDetachedIf([&](Instruction* i) { return i != c; });
  EXPECT_EQ(e->detached_instruction_count(), 0);
  EXPECT_EQ(e->instruction_count(), before + 3);
  EXPECT_EQ(e->FindInstruction("det_c"), nullptr);
  for (Instruction* i : {a, b, d}) EXPECT_FALSE(i->is_detached());
  EXPECT_EQ(p->user_count(), users_p + 1);  // a only
  EXPECT_EQ(a->user_count(), 1);
  EXPECT_EQ(b->user_count(), 1);
  // Appended in unique-id order after the originals.
  std::vector<std::string> tail;
  e->ForEachInstruction([&](Instruction* i) {
    if (i->name().rfind("det_", 0) == 0) tail.push_back(i->name());
  });
  EXPECT_EQ(tail, (std::vector<std::string>{"det_a", "det_b", "det_d"}));
  EXPECT_LT(a->unique_id(), b->unique_id());
  EXPECT_LT(b->unique_id(), d->unique_id());
  ExpectConsistentEdges(*m);
}

// Held out of order (AttachInstruction moves the last one into the gap):
// still attached in unique-id order.
TEST(ModuleTest, AttachDetachedIfSortsWhenHeldOutOfOrder) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  Instruction* p = e->FindInstruction("p");
  std::vector<Instruction*> made;
  for (const char* name : {"det_0", "det_1", "det_2", "det_3"}) {
    auto i = std::make_unique<Instruction>(Opcode::kNegate, p->shape());
    i->AppendOperand(p);
    i->set_name(name);
    made.push_back(e->AddDetachedInstruction(std::move(i)));
  }
  ASSERT_TRUE(e->AttachInstruction(made[0]).ok());  // det_3 moves first
  e->AttachDetachedIf([](Instruction*) { return true; });
  std::vector<std::string> order;
  e->ForEachInstruction([&](Instruction* i) {
    if (i->name().rfind("det_", 0) == 0) order.push_back(i->name());
  });
  EXPECT_EQ(order,
            (std::vector<std::string>{"det_0", "det_1", "det_2", "det_3"}));
  ExpectConsistentEdges(*m);
}

TEST(ModuleTest, RemoveDeadInstructions) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  EXPECT_EQ(e->RemoveDeadInstructions(), 2);  // dead, dead2
  EXPECT_EQ(e->instruction_count(), 6);       // q is a parameter: kept
  ExpectConsistentEdges(*m);
  EXPECT_EQ(e->RemoveDeadInstructions(), 0);
}

TEST(ModuleTest, ReplaceAllUsesWith) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  Instruction* n = e->FindInstruction("n");
  Instruction* q = e->FindInstruction("q");
  ASSERT_TRUE(n->ReplaceAllUsesWith(q).ok());
  EXPECT_EQ(n->user_count(), 0);
  EXPECT_EQ(q->user_count(), 3);  // n, dead, r
  EXPECT_EQ(e->root_instruction()->operand(0), q);
  ExpectConsistentEdges(*m);
  // Incompatible shapes are refused with a message.
  absl::Status s = q->ReplaceAllUsesWith(e->FindInstruction("z"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("incompatible shapes"),
            std::string::npos);
}

TEST(ModuleTest, ReplaceOperandAndUse) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  Instruction* mul = e->FindInstruction("m");
  Instruction* p = e->FindInstruction("p");
  Instruction* q = e->FindInstruction("q");
  ASSERT_TRUE(mul->ReplaceOperandWith(0, q).ok());
  EXPECT_EQ(p->user_count(), 1);  // still operand 1
  ASSERT_TRUE(mul->ReplaceOperandWith(1, q).ok());
  EXPECT_EQ(p->user_count(), 0);
  EXPECT_FALSE(mul->ReplaceOperandWith(7, q).ok());
  ASSERT_TRUE(q->ReplaceUseWith(mul, p).ok());
  EXPECT_EQ(mul->operand(0), p);
  EXPECT_EQ(mul->operand(1), p);
  EXPECT_FALSE(q->ReplaceUseWith(mul, p).ok());  // no longer a user
  ExpectConsistentEdges(*m);
}

TEST(ModuleTest, ControlDependencies) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  Instruction* mul = e->FindInstruction("m");
  Instruction* n = e->FindInstruction("n");
  ASSERT_EQ(n->control_predecessors().size(), 1u);
  EXPECT_EQ(n->control_predecessors()[0], mul);
  EXPECT_FALSE(mul->RemoveControlDependencyTo(e->FindInstruction("z")).ok());
  ASSERT_TRUE(mul->RemoveControlDependencyTo(n).ok());
  EXPECT_TRUE(n->control_predecessors().empty());
  EXPECT_TRUE(mul->control_successors().empty());
  ASSERT_TRUE(mul->AddControlDependencyTo(n).ok());
  ASSERT_TRUE(mul->AddControlDependencyTo(n).ok());  // idempotent
  EXPECT_EQ(n->control_predecessors().size(), 1u);
  Instruction* sum_root = m->FindComputation("sum")->root_instruction();
  EXPECT_FALSE(mul->AddControlDependencyTo(sum_root).ok());
}

TEST(ModuleTest, PostOrders) {
  auto m = Parse(kModule);
  std::vector<Computation*> comps = m->MakeComputationPostOrder();
  ASSERT_EQ(comps.size(), 2u);
  EXPECT_EQ(comps[0]->name(), "sum");
  EXPECT_EQ(comps[1]->name(), "main");
  std::vector<Instruction*> order =
      m->entry_computation()->MakeInstructionPostOrder();
  ASSERT_EQ(order.size(), 8u);
  auto pos = [&](std::string_view n) {
    for (size_t i = 0; i < order.size(); ++i) {
      if (order[i]->name() == n) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_EQ(order.back()->name(), "r");
  EXPECT_LT(pos("p"), pos("m"));
  EXPECT_LT(pos("m"), pos("n"));  // operand and control predecessor
  EXPECT_LT(pos("q"), pos("n"));
  EXPECT_LT(pos("n"), pos("dead"));
  EXPECT_LT(pos("dead"), pos("dead2"));
}

// The post-order is kept between calls until the computation changes: after
// every kind of change it must equal the order of a fresh clone (which has
// none kept), name for name.
TEST(ModuleTest, KeptPostOrderFollowsEveryChange) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  auto I = [&](std::string_view n) { return e->FindInstruction(n); };
  auto names = [](const std::vector<Instruction*>& order) {
    std::vector<std::string> out;
    for (const Instruction* i : order) out.push_back(i->name());
    return out;
  };
  auto expect_fresh = [&](const char* after) {
    const std::vector<std::string> kept = names(e->MakeInstructionPostOrder());
    EXPECT_EQ(kept, names(e->Clone()->MakeInstructionPostOrder())) << after;
    EXPECT_EQ(static_cast<int64_t>(kept.size()), e->instruction_count())
        << after;
  };
  expect_fresh("parse");
  expect_fresh("nothing");  // the kept order, unchanged
  const std::vector<std::string> before = names(e->MakeInstructionPostOrder());

  // `dead` reads `q` instead of `n`, and `m` reads `dead2`: both dead
  // instructions now come before `m`.
  ASSERT_TRUE(I("dead")->ReplaceOperandWith(0, I("q")).ok());
  expect_fresh("ReplaceOperandWith");
  ASSERT_TRUE(I("m")->ReplaceOperandWith(1, I("dead2")).ok());
  expect_fresh("ReplaceOperandWith, order changed");
  EXPECT_NE(names(e->MakeInstructionPostOrder()), before);
  ASSERT_TRUE(I("m")->RemoveControlDependencyTo(I("n")).ok());
  expect_fresh("RemoveControlDependencyTo");
  ASSERT_TRUE(I("dead2")->AddControlDependencyTo(I("m")).ok());
  expect_fresh("AddControlDependencyTo");
  I("dead2")->DropAllControlDeps();
  expect_fresh("DropAllControlDeps");
  Instruction* neg = e->AddInstruction(
      std::make_unique<Instruction>(Opcode::kNegate, I("p")->shape()));
  neg->AppendOperand(I("p"));
  expect_fresh("AddInstruction");
  ASSERT_TRUE(I("m")->ReplaceOperandWith(0, neg).ok());
  expect_fresh("operand added after");
  ASSERT_TRUE(I("m")->ReplaceOperandWith(1, I("p")).ok());
  ASSERT_TRUE(e->RemoveInstruction(I("dead2")).ok());
  expect_fresh("RemoveInstruction");
  e->set_root_instruction(I("n"));
  expect_fresh("set_root_instruction");
  EXPECT_EQ(e->RemoveDeadInstructions(), 3);  // dead, z and r
  expect_fresh("RemoveDeadInstructions");
}

// The module keeps its computation post-order until a computation is added
// or removed, the entry changes or a computation changes. After each such
// change (and in a clone, which copies the kept order) it must equal a
// plain recursive walk.
TEST(ModuleTest, KeptComputationOrderFollowsEveryChange) {
  auto m = Parse(R"(
HloModule m2

add_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max_f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  r1 = f32[] reduce(p, z), dimensions={0}, to_apply=add_f
  r2 = f32[] reduce(p, z), dimensions={0}, to_apply=max_f
  ROOT t = (f32[], f32[]) tuple(r1, r2)
}
)");
  ASSERT_NE(m, nullptr);
  auto reference = [](const Module& mod) {
    std::vector<std::string> out;
    std::set<const Computation*> seen;
    std::function<void(const Computation*)> visit = [&](const Computation* c) {
      if (!seen.insert(c).second) return;
      for (const Instruction* i : c->instructions()) {
        for (const Computation* callee : i->called_computations()) {
          visit(callee);
        }
      }
      out.push_back(c->name());
    };
    for (const auto& c : mod.computations()) {
      if (c.get() != mod.entry_computation()) visit(c.get());
    }
    if (mod.entry_computation() != nullptr) visit(mod.entry_computation());
    return out;
  };
  auto kept = [](const Module& mod) {
    std::vector<std::string> out;
    for (const Computation* c : mod.MakeComputationPostOrder()) {
      out.push_back(c->name());
    }
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(kept(*m), (Names{"add_f", "max_f", "main"}));
  EXPECT_EQ(kept(*m), reference(*m));  // kept, unchanged

  std::unique_ptr<Computation> late_owned =
      m->FindComputation("max_f")->Clone();
  late_owned->set_name("late");
  Computation* late = m->AddComputation(std::move(late_owned), false);
  EXPECT_EQ(kept(*m), (Names{"add_f", "max_f", "late", "main"}));
  EXPECT_EQ(kept(*m), reference(*m));

  // add_f calls late, which now comes before it.
  Computation* add_f = m->FindComputation("add_f");
  Instruction* a = add_f->parameter_instruction(0);
  Instruction* call = add_f->AddInstruction(
      std::make_unique<Instruction>(Opcode::kCall, a->shape()));
  call->AppendOperand(a);
  call->AppendOperand(add_f->parameter_instruction(1));
  call->set_called_computations({late});
  EXPECT_EQ(kept(*m), (Names{"late", "add_f", "max_f", "main"}));
  EXPECT_EQ(kept(*m), reference(*m));

  // A clone starts with the kept order, and each copy follows its own
  // changes.
  std::unique_ptr<Module> clone = m->Clone();
  EXPECT_EQ(kept(*clone), reference(*m));
  Computation* clone_add = clone->FindComputation("add_f");
  ASSERT_TRUE(
      clone_add->RemoveInstruction(clone_add->FindInstruction(call->name()))
          .ok());
  EXPECT_EQ(kept(*clone), (Names{"add_f", "max_f", "late", "main"}));
  EXPECT_EQ(kept(*clone), reference(*clone));
  EXPECT_EQ(kept(*m), (Names{"late", "add_f", "max_f", "main"}));

  Instruction* r1 = m->entry_computation()->FindInstruction("r1");
  r1->ReplaceCalledComputation(add_f, late);
  EXPECT_EQ(kept(*m), reference(*m));
  ASSERT_TRUE(add_f->RemoveInstruction(call).ok());
  EXPECT_EQ(m->RemoveComputationsIfUncalled({add_f}), 1);
  EXPECT_EQ(kept(*m), (Names{"max_f", "late", "main"}));
  EXPECT_EQ(kept(*m), reference(*m));
  m->set_entry_computation(m->FindComputation("max_f"));
  EXPECT_EQ(kept(*m), (Names{"late", "max_f", "main"}));
  EXPECT_EQ(kept(*m), reference(*m));
}

TEST(ModuleTest, Reachability) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  ReachabilityIndex reach(*e);
  auto I = [&](std::string_view n) { return e->FindInstruction(n); };
  EXPECT_TRUE(reach.IsReachable(I("p"), I("r")));
  EXPECT_TRUE(reach.IsReachable(I("m"), I("n")));
  EXPECT_TRUE(reach.IsReachable(I("q"), I("dead2")));
  EXPECT_TRUE(reach.IsReachable(I("n"), I("n")));
  EXPECT_FALSE(reach.IsReachable(I("r"), I("p")));
  EXPECT_FALSE(reach.IsReachable(I("dead"), I("r")));
  EXPECT_FALSE(reach.IsReachable(I("z"), I("dead2")));
  EXPECT_FALSE(reach.IsReachable(I("q"), I("m")));
}

// ReachesAny(from, set) is the OR of IsReachable over the set, for every
// instruction and every subset of up to three targets (duplicates too).
TEST(ModuleTest, ReachesAnyIsReachableOverTheSet) {
  auto m = Parse(kModule);
  Computation* e = m->entry_computation();
  ReachabilityIndex reach(*e);
  std::vector<const Instruction*> all;
  e->ForEachInstruction([&](Instruction* i) { all.push_back(i); });
  ASSERT_GE(all.size(), 6u);
  int64_t true_count = 0, checked = 0;
  for (const Instruction* from : all) {
    EXPECT_FALSE(reach.ReachesAny(from, {}));
    for (const Instruction* a : all) {
      for (const Instruction* b : all) {
        for (const Instruction* c : all) {
          const Instruction* set[] = {a, b, c};
          const bool expected = reach.IsReachable(from, a) ||
                                reach.IsReachable(from, b) ||
                                reach.IsReachable(from, c);
          EXPECT_EQ(reach.ReachesAny(from, set), expected)
              << from->name() << " -> {" << a->name() << ", " << b->name()
              << ", " << c->name() << "}";
          true_count += expected;
          ++checked;
        }
      }
    }
  }
  // Both answers occur often enough for the comparison to mean something.
  EXPECT_GT(true_count, checked / 10);
  EXPECT_LT(true_count, checked - checked / 10);
}

// A random DAG of `n` instructions in one computation: parameters and
// adds, mostly reading recent values (long paths) and sometimes any earlier
// one, with repeated operands, dead code, several sinks and control edges.
struct RandomDag {
  std::unique_ptr<Module> module;
  Computation* computation = nullptr;
  std::vector<Instruction*> nodes;
};
RandomDag MakeRandomDag(std::mt19937_64& rng, int n) {
  RandomDag dag;
  dag.module = std::make_unique<Module>("random_dag");
  auto c = std::make_unique<Computation>("main");
  Shape s(PrimitiveType::kF32, {4});
  std::vector<Instruction*>& nodes = dag.nodes;
  for (int k = 0; k < n; ++k) {
    std::unique_ptr<Instruction> i;
    if (k < 3 || rng() % 8 == 0) {
      i = std::make_unique<Instruction>(Opcode::kParameter, s);
    } else {
      i = std::make_unique<Instruction>(Opcode::kAdd, s);
      for (int o = 0; o < 2; ++o) {
        const int span = rng() % 4 == 0 ? k : std::min(k, 6);
        i->AppendOperand(nodes[k - 1 - rng() % span]);
      }
    }
    i->set_name(StrCat("n", k));
    nodes.push_back(c->AddInstruction(std::move(i)));
  }
  for (int e = 0; e < n / 10; ++e) {
    const int a = static_cast<int>(rng() % (n - 1));
    const int b = a + 1 + static_cast<int>(rng() % (n - 1 - a));
    EXPECT_TRUE(nodes[a]->AddControlDependencyTo(nodes[b]).ok());
  }
  c->set_root_instruction(nodes.back());
  dag.computation = dag.module->AddComputation(std::move(c), true);
  return dag;
}

// Every answer of the index against a transitive closure computed here by
// plain searches, on random DAGs.
TEST(ModuleTest, ReachabilityMatchesATransitiveClosure) {
  std::mt19937_64 rng(7);
  int64_t reachable = 0, pairs = 0;
  for (int graph = 0; graph < 40; ++graph) {
    const int n = 20 + static_cast<int>(rng() % 60);
    RandomDag dag = MakeRandomDag(rng, n);
    const std::vector<Instruction*>& nodes = dag.nodes;
    Computation* comp = dag.computation;
    ReachabilityIndex reach(*comp);
    for (Instruction* to : nodes) {
      // Everything `to` depends on, by a plain search over operands and
      // control predecessors.
      std::set<const Instruction*> deps{to};
      std::vector<const Instruction*> stack{to};
      while (!stack.empty()) {
        const Instruction* i = stack.back();
        stack.pop_back();
        for (const Instruction* d : i->operands()) {
          if (deps.insert(d).second) stack.push_back(d);
        }
        for (const Instruction* d : i->control_predecessors()) {
          if (deps.insert(d).second) stack.push_back(d);
        }
      }
      for (Instruction* from : nodes) {
        const bool expected = deps.contains(from);
        ASSERT_EQ(reach.IsReachable(from, to), expected)
            << "graph " << graph << ": " << from->name() << " -> "
            << to->name();
        reachable += expected;
        ++pairs;
      }
    }
  }
  EXPECT_GT(reachable, pairs / 10);
  EXPECT_LT(reachable, pairs - pairs / 10);
}

// Among(set) answers every pair of a set as IsReachable does: random sets
// (repeats included, more than 64 members in some so rows span words) on
// random DAGs with control edges and dead code.
TEST(ModuleTest, ReachabilityAmongASetMatchesSingleQueries) {
  std::mt19937_64 rng(11);
  int64_t reachable = 0, pairs = 0;
  for (int graph = 0; graph < 30; ++graph) {
    const int n = 30 + static_cast<int>(rng() % 170);
    RandomDag dag = MakeRandomDag(rng, n);
    const std::vector<Instruction*>& nodes = dag.nodes;
    Computation* comp = dag.computation;
    ReachabilityIndex reach(*comp);
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<const Instruction*> set;
      const int size = 1 + static_cast<int>(rng() % 100);
      for (int k = 0; k < size; ++k) set.push_back(nodes[rng() % n]);
      EXPECT_GE(reach.AmongCost(set), 1);
      const ReachabilityIndex::Matrix among = reach.Among(set);
      for (size_t i = 0; i < set.size(); ++i) {
        for (size_t j = 0; j < set.size(); ++j) {
          const bool expected = reach.IsReachable(set[i], set[j]);
          ASSERT_EQ(among.Reaches(i, j), expected)
              << "graph " << graph << ": " << set[i]->name() << " -> "
              << set[j]->name();
          reachable += expected;
          ++pairs;
        }
      }
    }
  }
  EXPECT_GT(reachable, pairs / 10);
  EXPECT_LT(reachable, pairs - pairs / 10);
}

TEST(ModuleTest, ReachabilityOnALongChain) {
  // A 100k-deep chain: construction and queries must not recurse.
  auto m = std::make_unique<Module>("chain");
  auto c = std::make_unique<Computation>("main");
  Shape s(PrimitiveType::kF32, {4});
  auto p = std::make_unique<Instruction>(Opcode::kParameter, s);
  p->set_name("p");
  Instruction* prev = c->AddInstruction(std::move(p));
  Instruction* first = prev;
  for (int i = 0; i < 100000; ++i) {
    auto n = std::make_unique<Instruction>(Opcode::kNegate, s);
    n->set_name(StrCat("n", i));
    n->AppendOperand(prev);
    prev = c->AddInstruction(std::move(n));
  }
  c->set_root_instruction(prev);
  Computation* comp = m->AddComputation(std::move(c), true);
  ReachabilityIndex reach(*comp);
  EXPECT_TRUE(reach.IsReachable(first, prev));
  EXPECT_FALSE(reach.IsReachable(prev, first));
  EXPECT_EQ(reach.Position(first), 0);
  EXPECT_EQ(reach.Position(prev), 100000);
  EXPECT_TRUE(VerifyModule(*m).ok());
  auto clone = m->Clone();
  EXPECT_EQ(DagHash(*clone), DagHash(*m));
}

TEST(ModuleTest, UniqueNames) {
  auto m = Parse(kModule);
  EXPECT_EQ(m->UniqueInstructionName("fresh"), "fresh");
  EXPECT_EQ(m->UniqueInstructionName("fresh"), "fresh.1");
  EXPECT_EQ(m->UniqueInstructionName("m"), "m.1");  // "m" exists
  EXPECT_EQ(m->UniqueInstructionName("n"), "n.1");
  // Suffixes go past the largest in use for the stem; gaps are not reused.
  EXPECT_EQ(m->UniqueInstructionName("fresh.7"), "fresh.7");
  EXPECT_EQ(m->UniqueInstructionName("fresh.3"), "fresh.8");
  EXPECT_EQ(m->UniqueInstructionName("fresh"), "fresh.9");
  // A clone continues from the same table, and so does the original.
  std::unique_ptr<Module> clone = m->Clone();
  EXPECT_EQ(clone->UniqueInstructionName("fresh"), "fresh.10");
  EXPECT_EQ(m->UniqueInstructionName("fresh"), "fresh.10");
  EXPECT_EQ(m->UniqueComputationName("sum"), "sum.1");
  EXPECT_EQ(m->UniqueComputationName("other"), "other");
}

TEST(ModuleTest, UniqueNamesOddSuffixes) {
  auto m = Parse(kModule);
  // Only digits after the last dot are a suffix; anything else is a stem.
  EXPECT_EQ(m->UniqueInstructionName("a.b.2"), "a.b.2");
  EXPECT_EQ(m->UniqueInstructionName("a.b"), "a.b");
  EXPECT_EQ(m->UniqueInstructionName("a.b"), "a.b.3");
  EXPECT_EQ(m->UniqueInstructionName("x."), "x.");
  EXPECT_EQ(m->UniqueInstructionName("x."), "x..1");
  EXPECT_EQ(m->UniqueInstructionName("y.2z"), "y.2z");
  EXPECT_EQ(m->UniqueInstructionName("y.2z"), "y.2z.1");
  EXPECT_EQ(m->UniqueInstructionName(".5"), ".5");
  EXPECT_EQ(m->UniqueInstructionName(".5"), ".6");
  EXPECT_EQ(m->UniqueInstructionName("z.007"), "z.007");
  EXPECT_EQ(m->UniqueInstructionName("z.3"), "z.8");
  // 18 digits are read exactly; a suffix past int64 is part of the stem.
  EXPECT_EQ(m->UniqueInstructionName("w.123456789012345678"),
            "w.123456789012345678");
  EXPECT_EQ(m->UniqueInstructionName("w.1"), "w.123456789012345679");
  EXPECT_EQ(m->UniqueInstructionName("v.99999999999999999999"),
            "v.99999999999999999999");
  EXPECT_EQ(m->UniqueInstructionName("v.99999999999999999999"),
            "v.99999999999999999999.1");
}

TEST(ModuleTest, RemoveComputations) {
  auto m = Parse(kModule);
  Computation* sum = m->FindComputation("sum");
  absl::Status s = m->RemoveComputation(sum);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("calls it"), std::string::npos);
  EXPECT_FALSE(m->RemoveComputation(m->entry_computation()).ok());
  EXPECT_EQ(m->RemoveUnusedComputations(), 0);
  // Once nothing calls it, it is unused.
  m->entry_computation()->root_instruction()->set_called_computations({});
  EXPECT_EQ(m->RemoveUnusedComputations(), 1);
  EXPECT_EQ(m->computation_count(), 1);
  auto callers = m->Callers();
  EXPECT_TRUE(callers.empty());
}

// Dead code: `outer` calls `inner` (twice), `inner` calls `leaf`; `kept` is
// called by `orphan`, which nothing calls.
constexpr char kCallChain[] = R"(
HloModule chain
leaf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
inner {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=leaf
}
outer {
  y = f32[4] parameter(0)
  c1 = f32[] call(y), to_apply=inner
  c2 = f32[] call(y), to_apply=inner
  ROOT m = f32[] multiply(c1, c2)
}
kept {
  k = f32[] parameter(0)
  ROOT n = f32[] negate(k)
}
orphan {
  o = f32[] parameter(0)
  ROOT q = f32[] call(o), to_apply=kept
}
ENTRY e {
  ROOT p = f32[4] parameter(0)
}
)";

TEST(ModuleTest, RemoveComputationsIfUncalledFollowsCalls) {
  auto m = Parse(kCallChain);
  auto set = [&](std::initializer_list<const char*> names) {
    absl::flat_hash_set<const Computation*> s;
    for (const char* n : names) s.insert(m->FindComputation(n));
    return s;
  };
  // Called by something that stays: nothing goes.
  EXPECT_EQ(m->RemoveComputationsIfUncalled(set({"inner", "leaf", "kept"})), 0);
  EXPECT_EQ(m->RemoveComputationsIfUncalled(set({"e"})), 0);  // the entry
  // `outer` goes, then `inner` (both its calls gone), then `leaf`.
  EXPECT_EQ(
      m->RemoveComputationsIfUncalled(set({"outer", "inner", "leaf", "kept"})),
      3);
  EXPECT_EQ(m->FindComputation("outer"), nullptr);
  EXPECT_EQ(m->FindComputation("leaf"), nullptr);
  EXPECT_NE(m->FindComputation("kept"), nullptr);
  EXPECT_EQ(m->computation_count(), 3);
  // A removed caller frees only candidates.
  EXPECT_EQ(m->RemoveComputationsIfUncalled(set({"orphan"})), 1);
  EXPECT_NE(m->FindComputation("kept"), nullptr);
  EXPECT_TRUE(VerifyModule(*m).ok());
}

// With a scan limited to the candidates and `orphan` (all of them
// unreachable, so nothing else may call them), the same removals.
TEST(ModuleTest, RemoveComputationsIfUncalledScansWhatItIsTold) {
  auto m = Parse(kCallChain);
  absl::flat_hash_set<const Computation*> scanned;
  auto set = [&](std::initializer_list<const char*> names) {
    absl::flat_hash_set<const Computation*> s;
    for (const char* n : names) s.insert(m->FindComputation(n));
    return s;
  };
  const absl::flat_hash_set<const Computation*> scope =
      set({"outer", "inner", "leaf", "kept", "orphan"});
  auto may_call = [&](const Computation* c) {
    scanned.insert(c);
    return scope.contains(c);
  };
  EXPECT_EQ(m->RemoveComputationsIfUncalled(
                set({"outer", "inner", "leaf", "kept"}), may_call),
            3);
  EXPECT_EQ(m->FindComputation("outer"), nullptr);
  EXPECT_EQ(m->FindComputation("leaf"), nullptr);
  EXPECT_NE(m->FindComputation("kept"), nullptr);  // `orphan` calls it
  EXPECT_EQ(scanned.size(), 6u);  // asked about every computation
  EXPECT_TRUE(VerifyModule(*m).ok());
}

}  // namespace
}  // namespace hlogym
