// DagHash over the shared HLO corpus: invariance under renaming and
// reordering, sensitivity to single changes, and no collisions.
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "corpus_util.h"
#include "gtest/gtest.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace hlogym {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Files of the three manifests whose expect_error (where present) is not 1.
std::vector<fs::path> CorpusFiles(const std::string& shared) {
  std::vector<fs::path> files;
  for (const char* folder : {"hloenv", "models", "xla"}) {
    for (const CorpusEntry& e : LoadManifest(shared, folder)) {
      if (!e.expect_error) files.push_back(e.path);
    }
  }
  return files;
}

// Adds a copy of `old` to `nc`, with operands, control predecessors and
// called computations mapped to their copies (which must exist already).
Instruction* CopyInstructionInto(
    const Instruction& old, Computation* nc,
    absl::flat_hash_map<const Instruction*, Instruction*>& map,
    const absl::flat_hash_map<const Computation*, Computation*>& comp_map) {
  std::vector<Instruction*> ops;
  for (Instruction* op : old.operands()) ops.push_back(map.at(op));
  auto n = old.CloneWithNewOperands(ops);
  std::vector<Computation*> callees;
  for (Computation* callee : old.called_computations()) {
    callees.push_back(comp_map.at(callee));
  }
  n->set_called_computations(std::move(callees));
  Instruction* added = nc->AddInstruction(std::move(n));
  for (Instruction* p : old.control_predecessors()) {
    EXPECT_TRUE(map.at(p)->AddControlDependencyTo(added).ok());
  }
  map[&old] = added;
  return added;
}

// Copies `m` into a new module with fresh names, adding computations in a
// random callee-first order and each computation's instructions in a random
// topological order (Kahn's algorithm with a random pick of the ready set).
std::unique_ptr<Module> ShuffledRenamedClone(const Module& m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto out = std::make_unique<Module>("shuffled");
  *out->mutable_config() = m.config();
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>> fresh;
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  int64_t next_name = 0;
  for (const auto& c : m.computations()) {
    auto nc = std::make_unique<Computation>(StrCat("c", next_name++));
    nc->set_execution_thread(c->execution_thread());
    nc->set_is_fusion_computation(c->IsFusionComputation());
    comp_map[c.get()] = nc.get();
    fresh[c.get()] = std::move(nc);
  }
  for (const auto& c : m.computations()) {
    Computation* nc = comp_map[c.get()];
    const std::vector<Instruction*> insts = c->instructions();
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    absl::flat_hash_map<const Instruction*, int64_t> waiting;
    std::vector<Instruction*> ready;
    for (Instruction* i : insts) {
      absl::flat_hash_set<const Instruction*> deps(i->operands().begin(),
                                                   i->operands().end());
      deps.insert(i->control_predecessors().begin(),
                  i->control_predecessors().end());
      waiting[i] = static_cast<int64_t>(deps.size());
      if (deps.empty()) ready.push_back(i);
    }
    while (!ready.empty()) {
      const size_t pick = rng() % ready.size();
      Instruction* old = ready[pick];
      ready[pick] = ready.back();
      ready.pop_back();
      CopyInstructionInto(*old, nc, map, comp_map)
          ->set_name(StrCat("v", next_name++));
      // Each user is counted once per distinct dependency.
      absl::flat_hash_set<const Instruction*> users(old->users().begin(),
                                                    old->users().end());
      users.insert(old->control_successors().begin(),
                   old->control_successors().end());
      for (const Instruction* u : users) {
        if (--waiting[u] == 0) ready.push_back(const_cast<Instruction*>(u));
      }
    }
    EXPECT_EQ(map.size(), insts.size()) << "cycle in " << c->name();
    if (c->root_instruction()) {
      nc->set_root_instruction(map.at(c->root_instruction()));
    }
  }
  // Callee-first random order of computations.
  absl::flat_hash_map<const Computation*, int64_t> waiting;
  absl::flat_hash_map<const Computation*, std::vector<const Computation*>>
      callers;
  std::vector<const Computation*> ready;
  for (const auto& c : m.computations()) {
    absl::flat_hash_set<const Computation*> callees;
    c->ForEachInstruction([&](Instruction* i) {
      callees.insert(i->called_computations().begin(),
                     i->called_computations().end());
    });
    waiting[c.get()] = static_cast<int64_t>(callees.size());
    for (const Computation* callee : callees)
      callers[callee].push_back(c.get());
    if (callees.empty()) ready.push_back(c.get());
  }
  while (!ready.empty()) {
    const size_t pick = rng() % ready.size();
    const Computation* c = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    out->AddComputation(std::move(fresh[c]), c == m.entry_computation());
    for (const Computation* caller : callers[c]) {
      if (--waiting[caller] == 0) ready.push_back(caller);
    }
  }
  EXPECT_EQ(out->computation_count(), m.computation_count());
  return out;
}

// Copies `m` with instructions and computations in an order that depends
// only on structure: a post-order from the root (then from the other sinks,
// sorted by their cone hash), and computations sorted by DagHash. The
// canonical printer numbers instructions by post-order position, which
// otherwise depends on the text order.
std::unique_ptr<Module> StructurallyOrderedClone(const Module& m) {
  auto out = std::make_unique<Module>(m.name());
  *out->mutable_config() = m.config();
  std::vector<std::pair<uint64_t, const Computation*>> comps;
  for (const auto& c : m.computations())
    comps.push_back({DagHash(*c), c.get()});
  std::stable_sort(
      comps.begin(), comps.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>> fresh;
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  for (const auto& [h, c] : comps) {
    auto nc = std::make_unique<Computation>(c->name());
    nc->set_execution_thread(c->execution_thread());
    nc->set_is_fusion_computation(c->IsFusionComputation());
    comp_map[c] = nc.get();
    fresh[c] = std::move(nc);
  }
  for (const auto& [h, c] : comps) {
    Computation* nc = comp_map[c];
    std::vector<std::pair<uint64_t, const Instruction*>> starts;
    c->ForEachInstruction([&](Instruction* i) {
      if (i != c->root_instruction() && i->users().empty() &&
          i->control_successors().empty()) {
        starts.push_back({InstructionHash(*i), i});
      }
    });
    std::stable_sort(
        starts.begin(), starts.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    if (c->root_instruction())
      starts.insert(starts.begin(), {0, c->root_instruction()});
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    absl::flat_hash_set<const Instruction*> open;
    for (const auto& [unused, start] : starts) {
      if (map.contains(start)) continue;
      std::vector<std::pair<const Instruction*, size_t>> stack = {{start, 0}};
      open.insert(start);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        const size_t nops = node->operands().size();
        if (next < nops + node->control_predecessors().size()) {
          const Instruction* dep =
              next < nops ? node->operand(next)
                          : node->control_predecessors()[next - nops];
          ++next;
          if (!map.contains(dep) && open.insert(dep).second) {
            stack.push_back({dep, 0});
          }
          continue;
        }
        const Instruction* old = node;
        stack.pop_back();
        CopyInstructionInto(*old, nc, map, comp_map);
      }
    }
    if (c->root_instruction()) {
      nc->set_root_instruction(map.at(c->root_instruction()));
    }
  }
  // Module order = post-order of calls from the entry (callees in the new
  // instruction order), then from the uncalled computations by hash; the
  // printer numbers computations in this order.
  absl::flat_hash_map<const Computation*, const Computation*> back;
  for (const auto& [from, to] : comp_map) back[to] = from;
  std::vector<const Computation*> starts;
  if (m.entry_computation()) starts.push_back(m.entry_computation());
  for (const auto& [h, c] : comps) starts.push_back(c);
  absl::flat_hash_set<const Computation*> seen;
  for (const Computation* start : starts) {
    if (!seen.insert(start).second) continue;
    std::vector<std::pair<const Computation*, std::vector<const Computation*>>>
        stack;
    auto callees_of = [&](const Computation* old) {
      std::vector<const Computation*> callees;
      comp_map.at(old)->ForEachInstruction([&](Instruction* i) {
        for (Computation* callee : i->called_computations()) {
          callees.push_back(back.at(callee));
        }
      });
      std::reverse(callees.begin(), callees.end());
      return callees;
    };
    stack.push_back({start, callees_of(start)});
    while (!stack.empty()) {
      auto& [c, pending] = stack.back();
      if (!pending.empty()) {
        const Computation* next = pending.back();
        pending.pop_back();
        if (seen.insert(next).second) stack.push_back({next, callees_of(next)});
        continue;
      }
      const Computation* done = c;
      stack.pop_back();
      out->AddComputation(std::move(fresh[done]),
                          done == m.entry_computation());
    }
  }
  return out;
}

bool IsNonCommutativeBinary(Opcode op) {
  switch (op) {
    case Opcode::kSubtract:
    case Opcode::kDivide:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kAtan2:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kCompare:
    case Opcode::kComplex:
      return true;
    default:
      return false;
  }
}

// One in-place change to an instruction, with its undo. Returns an empty
// description when the change does not apply to `inst`.
struct Change {
  std::string what;
  std::function<void()> undo;
};

Change TryChange(Instruction* inst, int kind) {
  Change none;
  switch (kind) {
    case 0: {  // a dimension size
      Shape* s = inst->mutable_shape();
      if (!s->IsArray() || s->rank() == 0) return none;
      const int64_t d = s->dimensions(0);
      if (d < 0) return none;
      s->set_dimensions(0, d + 1);
      return {"dimension size",
              [inst, d] { inst->mutable_shape()->set_dimensions(0, d); }};
    }
    case 1: {  // a comparison direction
      if (inst->opcode() != Opcode::kCompare) return none;
      const ComparisonDirection d = inst->comparison_direction();
      inst->set_comparison_direction(d == ComparisonDirection::kEq
                                         ? ComparisonDirection::kNe
                                         : ComparisonDirection::kEq);
      return {"comparison direction",
              [inst, d] { inst->set_comparison_direction(d); }};
    }
    case 2: {  // a constant value
      if (!inst->has_literal() || inst->literal().is_unknown() ||
          inst->literal().element_count() == 0) {
        return none;
      }
      Literal old = inst->literal();
      Literal changed = old;
      changed.SetBits(0, changed.GetBits(0) ^ 1);
      inst->set_literal(std::move(changed));
      return {"constant value", [inst, old] { inst->set_literal(old); }};
    }
    case 3: {  // the operands of a non-commutative binary op
      if (!IsNonCommutativeBinary(inst->opcode()) ||
          inst->operand_count() != 2) {
        return none;
      }
      Instruction* a = inst->operand(0);
      Instruction* b = inst->operand(1);
      // Swapping structurally identical operands gives an isomorphic graph;
      // differing 3-hop hashes prove the cones differ.
      if (a == b || InstructionHash(*a, 3) == InstructionHash(*b, 3)) {
        return none;
      }
      EXPECT_TRUE(inst->ReplaceOperandWith(0, b).ok());
      EXPECT_TRUE(inst->ReplaceOperandWith(1, a).ok());
      return {"operand order", [inst, a, b] {
                EXPECT_TRUE(inst->ReplaceOperandWith(0, a).ok());
                EXPECT_TRUE(inst->ReplaceOperandWith(1, b).ok());
              }};
    }
    case 4: {  // a layout
      Shape* s = inst->mutable_shape();
      if (!s->IsArray() || !s->has_layout()) return none;
      Layout* l = s->mutable_layout();
      const Layout old = *l;
      if (s->rank() >= 2) {
        std::reverse(l->minor_to_major.begin(), l->minor_to_major.end());
      } else {
        l->mutable_tail().memory_space += 1;
      }
      return {"layout",
              [inst, old] { *inst->mutable_shape()->mutable_layout() = old; }};
    }
    case 5: {  // a dimensions= attribute
      if (inst->dimensions().empty()) return none;
      const DimVector old = inst->dimensions();
      DimVector changed = old;
      changed[0] += 1;
      inst->set_dimensions(std::move(changed));
      return {"dimensions attribute",
              [inst, old] { inst->set_dimensions(old); }};
    }
    case 6: {  // an integer attribute (tuple index, iota dimension, ...)
      if (inst->opcode() != Opcode::kGetTupleElement &&
          inst->opcode() != Opcode::kIota &&
          inst->opcode() != Opcode::kParameter) {
        return none;
      }
      const int64_t old = inst->int_attr();
      inst->set_int_attr(old + 1);
      return {"integer attribute", [inst, old] { inst->set_int_attr(old); }};
    }
    case 7: {  // the backend config
      const std::string old = inst->backend_config();
      inst->set_backend_config(old + " ");
      return {"backend config", [inst, old] { inst->set_backend_config(old); }};
    }
    default:
      return none;
  }
}
constexpr int kNumChangeKinds = 8;

struct Parsed {
  fs::path path;
  std::unique_ptr<Module> module;
};

// Parses each distinct corpus file once (shared by the tests below).
class DagHashCorpusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string shared = SharedDir();
    if (shared.empty()) return;
    available_ = true;
    absl::flat_hash_set<std::pair<uint64_t, size_t>> seen;
    for (const fs::path& p : CorpusFiles(shared)) {
      const std::string text = ReadFile(p);
      if (!seen.insert({XXH3_64bits(text.data(), text.size()), text.size()})
               .second) {
        continue;  // byte-identical to a file already loaded
      }
      ++files_;
      ParseOptions options;
      options.filename = p.filename().string();
      const auto start = std::chrono::steady_clock::now();
      auto m = ParseModule(text, options);
      const double seconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      if (seconds > 1.0) {
        std::cout << "[ WARNING  ] parsing " << p << " took " << seconds
                  << " s\n";
      }
      if (!m.ok()) continue;
      modules_->push_back({p, std::move(*m)});
    }
  }
  static void TearDownTestSuite() { modules_->clear(); }

  void SetUp() override {
    if (!available_) {
      GTEST_SKIP() << "../shared not found: corpus tests skipped";
    }
  }

  static bool available_;
  static int64_t files_;
  static std::vector<Parsed>* modules_;
};

bool DagHashCorpusTest::available_ = false;
int64_t DagHashCorpusTest::files_ = 0;
std::vector<Parsed>* DagHashCorpusTest::modules_ = new std::vector<Parsed>();

TEST_F(DagHashCorpusTest, InvariantUnderRenamingAndReordering) {
  ASSERT_FALSE(modules_->empty());
  std::cout << "[ INFO     ] " << modules_->size() << " of " << files_
            << " distinct corpus files parsed\n";
  uint64_t seed = 1;
  for (const Parsed& p : *modules_) {
    const uint64_t h = DagHash(*p.module);
    EXPECT_EQ(DagHash(*p.module), h) << p.path;
    EXPECT_EQ(DagHash(*p.module->Clone()), h) << p.path;
    auto shuffled = ShuffledRenamedClone(*p.module, seed++);
    EXPECT_EQ(DagHash(*shuffled), h) << p.path;
  }
}

TEST_F(DagHashCorpusTest, SingleChangesChangeTheHash) {
  ASSERT_FALSE(modules_->empty());
  constexpr int kChangesPerModule = 6;
  std::mt19937_64 rng(42);
  absl::flat_hash_map<std::string, int64_t> tried;
  for (const Parsed& p : *modules_) {
    Module& m = *p.module;
    const uint64_t h = DagHash(m);
    std::vector<Instruction*> all;
    for (const auto& c : m.computations()) {
      c->ForEachInstruction([&](Instruction* i) { all.push_back(i); });
    }
    if (all.empty()) continue;
    int done = 0;
    for (int attempt = 0; attempt < 64 && done < kChangesPerModule; ++attempt) {
      Instruction* inst = all[rng() % all.size()];
      Change change =
          TryChange(inst, static_cast<int>(rng() % kNumChangeKinds));
      if (change.what.empty()) continue;
      ++done;
      ++tried[change.what];
      EXPECT_NE(DagHash(m), h)
          << p.path << ": changing the " << change.what << " of '"
          << inst->name() << "' left the hash unchanged";
      change.undo();
    }
    EXPECT_EQ(DagHash(m), h) << p.path << ": undoing the changes";
  }
  for (const auto& [what, n] : tried) {
    std::cout << "[ INFO     ] changed " << what << " " << n << " times\n";
  }
}

TEST_F(DagHashCorpusTest, NoCollisions) {
  ASSERT_FALSE(modules_->empty());
  PrintOptions canonical;
  canonical.canonical = true;
  canonical.print_metadata = false;
  // Things the hash ignores on purpose, cleared so that the canonical text
  // compares what the hash sees.
  auto canonical_text = [&](const Module& m) {
    std::unique_ptr<Module> ordered = StructurallyOrderedClone(m);
    ModuleConfig* c = ordered->mutable_config();
    c->is_scheduled.reset();
    c->origin_recovery_table.clear();
    c->debug_attributes.clear();
    c->stack_frames.clear();
    return PrintModule(*ordered, canonical);
  };
  absl::flat_hash_map<uint64_t, size_t> by_hash;
  int64_t equal_pairs = 0;
  for (size_t i = 0; i < modules_->size(); ++i) {
    Parsed& p = (*modules_)[i];
    auto [it, inserted] = by_hash.emplace(DagHash(*p.module), i);
    if (inserted) continue;
    ++equal_pairs;
    Parsed& q = (*modules_)[it->second];
    const std::string a = canonical_text(*p.module);
    const std::string b = canonical_text(*q.module);
    if (a == b) continue;
    // Report the first line that differs.
    std::istringstream sa(a), sb(b);
    std::string la, lb;
    int line = 1;
    while (std::getline(sa, la) && std::getline(sb, lb) && la == lb) ++line;
    ADD_FAILURE() << "DagHash collision: " << p.path << " and " << q.path
                  << " differ at canonical line " << line << ":\n  " << la
                  << "\n  " << lb;
  }
  std::cout << "[ INFO     ] " << by_hash.size() << " distinct hashes, "
            << equal_pairs << " structurally equal duplicates\n";
}

}  // namespace
}  // namespace hlogym
