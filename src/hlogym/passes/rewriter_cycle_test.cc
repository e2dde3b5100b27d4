// The dry-mode cycle check against a plain reference: random graphs, random
// candidates that read arbitrary instructions (so many of them close
// cycles, alone or together), and a depth-first search per candidate over
// the graph as it stands, in the documented order.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/builders.h"
#include "hlogym/passes/pass.h"
#include "hlogym/passes/pass_test_util.h"
#include "hlogym/passes/rewriter.h"

namespace hlogym {
namespace {

class LambdaPass : public Pass {
 public:
  using Fn = std::function<absl::StatusOr<bool>(Module*, Rewriter&)>;
  explicit LambdaPass(Fn fn) : fn_(std::move(fn)) {}
  std::string_view name() const override { return "random-candidates"; }
  absl::StatusOr<bool> RunWith(Module* m, Rewriter& rw) override {
    return fn_(m, rw);
  }

 private:
  Fn fn_;
};

// A random DAG of adds over two parameters; the sinks form the root tuple.
std::string RandomGraph(std::mt19937& rng, int nodes) {
  std::string text = "HloModule m\nENTRY e {\n";
  text += "  n0 = f32[2] parameter(0)\n  n1 = f32[2] parameter(1)\n";
  std::vector<bool> used(nodes, false);
  for (int k = 2; k < nodes; ++k) {
    std::uniform_int_distribution<int> pick(std::max(0, k - 8), k - 1);
    const int a = pick(rng), b = pick(rng);
    used[a] = used[b] = true;
    text += StrCat("  n", k, " = f32[2] add(n", a, ", n", b, ")\n");
  }
  std::vector<std::string> sinks;
  std::string shapes;
  for (int k = 2; k < nodes; ++k) {
    if (used[k]) continue;
    sinks.push_back(StrCat("n", k));
    shapes += StrCat(shapes.empty() ? "" : ", ", "f32[2]");
  }
  std::string list;
  for (const std::string& s : sinks) list += (list.empty() ? "" : ", ") + s;
  text += StrCat("  ROOT t = (", shapes, ") tuple(", list, ")\n}\n");
  return text;
}

// One recorded rewrite. A rejected candidate is deleted at Finish(), so
// what the reference needs of it is copied here.
struct Triple {
  Instruction* original;
  Instruction* user;
  const Instruction* candidate;  // dangling once rejected
  int64_t candidate_id;
  const Instruction* reads[2];
};

TEST(CycleCheckTest, MatchesReferenceOnRandomGraphs) {
  int64_t total_rejected = 0, total_kept = 0;
  for (uint32_t seed = 1; seed <= 150; ++seed) {
    std::mt19937 rng(seed);
    const int nodes = 12 + static_cast<int>(seed % 30);
    std::unique_ptr<Module> m = test::ParseAndVerify(RandomGraph(rng, nodes));
    ASSERT_NE(m, nullptr);
    // The original dependencies, by instruction.
    absl::flat_hash_map<const Instruction*, std::vector<const Instruction*>>
        deps;
    std::vector<Instruction*> originals;
    m->entry_computation()->ForEachInstruction([&](Instruction* i) {
      if (i->opcode() == Opcode::kAdd) originals.push_back(i);
      for (const Instruction* o : i->operands()) deps[i].push_back(o);
    });
    std::vector<Instruction*> readable;
    m->entry_computation()->ForEachInstruction([&](Instruction* i) {
      if (i->opcode() != Opcode::kTuple) readable.push_back(i);
    });
    std::vector<Triple> triples;
    LambdaPass pass([&](Module*, Rewriter& rw) -> absl::StatusOr<bool> {
      std::uniform_int_distribution<size_t> pick_orig(0, originals.size() - 1);
      std::uniform_int_distribution<size_t> pick_any(0, readable.size() - 1);
      const int count = 5 + static_cast<int>(seed % 25);
      for (int t = 0; t < count; ++t) {
        Instruction* o = originals[pick_orig(rng)];
        std::uniform_int_distribution<size_t> pick_user(0, o->user_count() - 1);
        Instruction* u = o->users()[pick_user(rng)];
        Instruction* x = readable[pick_any(rng)];
        Instruction* y = readable[pick_any(rng)];
        HLOGYM_ASSIGN_OR_RETURN(Instruction * c,
                                MakeBinary(rw, Opcode::kMultiply, x, y));
        HLOGYM_RETURN_IF_ERROR(rw.ReplaceUseWith(o, u, c).status());
        triples.push_back({o, u, c, c->unique_id(), {x, y}});
      }
      return true;
    });
    absl::StatusOr<AugmentStats> stats = pass.RunDry(m.get());
    ASSERT_TRUE(stats.ok()) << stats.status();
    ASSERT_TRUE(VerifyModule(*m).ok()) << "seed " << seed;

    // Reference: uses by (original id, user id), candidates by id; each
    // candidate is kept unless it depends on its user in the graph so far.
    std::map<std::pair<int64_t, int64_t>, std::vector<const Triple*>> keys;
    for (const Triple& t : triples) {
      keys[{t.original->unique_id(), t.user->unique_id()}].push_back(&t);
    }
    for (const Triple& t : triples) {
      deps[t.candidate] = {t.reads[0], t.reads[1]};
    }
    auto depends_on = [&](const Instruction* from, const Instruction* target) {
      absl::flat_hash_set<const Instruction*> seen = {from};
      std::vector<const Instruction*> stack = {from};
      while (!stack.empty()) {
        const Instruction* i = stack.back();
        stack.pop_back();
        if (i == target) return true;
        for (const Instruction* d : deps[i]) {
          if (seen.insert(d).second) stack.push_back(d);
        }
      }
      return false;
    };
    int64_t rejected = 0;
    std::map<std::pair<int64_t, int64_t>, std::vector<const Instruction*>> kept;
    for (auto& [key, list] : keys) {
      std::sort(list.begin(), list.end(), [](const Triple* a, const Triple* b) {
        return a->candidate_id < b->candidate_id;
      });
      for (const Triple* t : list) {
        if (depends_on(t->candidate, t->user)) {
          ++rejected;
          continue;
        }
        deps[t->user].push_back(t->candidate);
        kept[key].push_back(t->candidate);
      }
    }
    EXPECT_EQ(stats->rejected_cyclic, rejected) << "seed " << seed;
    // The alternatives nodes hold exactly the kept candidates.
    std::map<std::pair<int64_t, int64_t>, std::vector<const Instruction*>>
        found;
    m->entry_computation()->ForEachInstruction([&](Instruction* a) {
      if (a->opcode() != Opcode::kAlternatives) return;
      ASSERT_EQ(a->user_count(), 1);
      auto& list =
          found[{a->operand(0)->unique_id(), a->users()[0]->unique_id()}];
      for (int64_t k = 1; k < a->operand_count(); ++k) {
        list.push_back(a->operand(k));
      }
    });
    EXPECT_EQ(found, kept) << "seed " << seed;
    total_rejected += rejected;
    for (const auto& [key, list] : kept) total_kept += list.size();
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(total_rejected, 100);
  EXPECT_GT(total_kept, 100);
}

// One original with many recorded uses (a producer whose candidates feed
// hundreds of users): the alternatives nodes still come in the documented
// order, users by unique id and each node's candidates by unique id, however
// the pass recorded them.
TEST(CycleCheckTest, ManyUsesOfOneOriginalKeepTheDocumentedOrder) {
  constexpr int kUsers = 60;
  std::string text = "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n";
  text += "  a = f32[2] negate(p)\n";
  std::string list, shapes;
  for (int k = 0; k < kUsers; ++k) {
    text += StrCat("  use", k, " = f32[2] exponential(a)\n");
    list += StrCat(k ? ", " : "", "use", k);
    shapes += StrCat(k ? ", " : "", "f32[2]");
  }
  text += StrCat("  ROOT t = (", shapes, ") tuple(", list, ")\n}\n");
  std::unique_ptr<Module> m = test::ParseAndVerify(text);
  ASSERT_NE(m, nullptr);
  Instruction* a = m->entry_computation()->FindInstruction("a");
  Instruction* p = m->entry_computation()->FindInstruction("p");
  std::vector<Instruction*> users(a->users().begin(), a->users().end());
  std::mt19937 rng(7);
  std::shuffle(users.begin(), users.end(), rng);
  LambdaPass pass([&](Module*, Rewriter& rw) -> absl::StatusOr<bool> {
    // Three candidates per use, recorded users in a shuffled order and
    // each use's candidates newest first.
    for (Instruction* u : users) {
      Instruction* made[3];
      for (Instruction*& c : made) {
        HLOGYM_ASSIGN_OR_RETURN(c, MakeBinary(rw, Opcode::kMultiply, p, p));
      }
      for (int k = 2; k >= 0; --k) {
        HLOGYM_RETURN_IF_ERROR(rw.ReplaceUseWith(a, u, made[k]).status());
      }
    }
    return true;
  });
  absl::StatusOr<AugmentStats> stats = pass.RunDry(m.get());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->alternatives, kUsers);
  EXPECT_EQ(stats->candidates, 3 * kUsers);
  std::vector<const Instruction*> nodes;
  m->entry_computation()->ForEachInstruction([&](Instruction* i) {
    if (i->opcode() == Opcode::kAlternatives) nodes.push_back(i);
  });
  ASSERT_EQ(nodes.size(), static_cast<size_t>(kUsers));
  // Inserted in key order: by the nodes' own ids, users ascend.
  std::sort(nodes.begin(), nodes.end(),
            [](const Instruction* x, const Instruction* y) {
              return x->unique_id() < y->unique_id();
            });
  int64_t last_user = -1;
  for (const Instruction* n : nodes) {
    ASSERT_EQ(n->user_count(), 1);
    EXPECT_GT(n->users()[0]->unique_id(), last_user);
    last_user = n->users()[0]->unique_id();
    ASSERT_EQ(n->operand_count(), 4);
    EXPECT_EQ(n->operand(0), a);
    EXPECT_LT(n->operand(1)->unique_id(), n->operand(2)->unique_id());
    EXPECT_LT(n->operand(2)->unique_id(), n->operand(3)->unique_id());
  }
}

}  // namespace
}  // namespace hlogym
