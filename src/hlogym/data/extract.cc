#include "hlogym/data/extract.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "hlogym/cost/cost_analysis.h"
#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"

namespace hlogym {
namespace {

using InstSet = absl::flat_hash_set<const Instruction*>;

bool ShapeHasTokenOrOpaque(const Shape& s) {
  if (s.IsToken() || s.IsOpaque()) return true;
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (ShapeHasTokenOrOpaque(e)) return true;
    }
  }
  return false;
}

// Opcodes that never go into a subgraph (nor into a computation a member
// calls): effects, tokens, cross-device communication, async halves that
// need their partner, targets the interpreter cannot run.
bool IsExcludedOpcode(Opcode op) {
  switch (op) {
    case Opcode::kAlternatives:
    case Opcode::kCustomCall:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
      return true;
    default:
      return false;
  }
}

bool IsUnboundedOrUnusual(const Shape& s) {
  return ShapeHasTokenOrOpaque(s) || s.IsBuffer() || s.is_unbounded_dynamic();
}

// A constant copied into the subgraph rather than cut.
bool IsCopyableConstant(const Instruction* inst) {
  return inst->opcode() == Opcode::kConstant && inst->has_literal() &&
         !inst->literal().is_unknown() && inst->shape().IsArray() &&
         inst->shape().ElementsIn() <= kMaxCopiedConstantElements;
}

// Computations whose instructions may be cut: called only by while,
// conditional and call (or by nothing, like the entry).
std::vector<const Computation*> SourceComputations(const Module& module) {
  auto callers = module.Callers();
  std::vector<const Computation*> out;
  for (const auto& c : module.computations()) {
    if (c->IsFusionComputation() || c->IsAsyncWrapper()) continue;
    bool ok = true;
    auto it = callers.find(c.get());
    if (it != callers.end()) {
      for (const Instruction* caller : it->second) {
        Opcode op = caller->opcode();
        if (op != Opcode::kWhile && op != Opcode::kConditional &&
            op != Opcode::kCall) {
          ok = false;
        }
      }
    }
    if (ok) out.push_back(c.get());
  }
  return out;
}

class Extraction {
 public:
  Extraction(const ExtractOptions& options, ExtractStats* stats,
             absl::flat_hash_set<uint64_t>* seen)
      : options_(options), stats_(stats), seen_(seen) {}

  std::vector<ExtractedSubgraph> Run(const Module& module, int64_t budget);

 private:
  struct Source {
    const Computation* comp;
    absl::flat_hash_map<const Instruction*, int64_t> position;
  };

  uint64_t Draw(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  // Whether the instruction and everything it calls are allowed inside a
  // subgraph (GTE and constant rules aside).
  bool Allowed(const Instruction* inst);
  bool CalleeAllowed(const Computation* c);
  bool CanJoin(const Instruction* inst, const InstSet& members);
  bool CanSeed(const Instruction* inst) {
    return inst->opcode() != Opcode::kConstant &&
           inst->opcode() != Opcode::kGetTupleElement && Allowed(inst);
  }

  std::vector<const Instruction*> Outputs(const Source& src,
                                          const InstSet& members) const;
  int64_t Count(const Source& src, const InstSet& members) const {
    const int64_t outs = static_cast<int64_t>(Outputs(src, members).size());
    return static_cast<int64_t>(members.size()) + (outs > 1 ? 1 : 0);
  }
  // Grows a subgraph from `seed`; false if no size in [min, max] was
  // reached.
  bool Grow(const Source& src, const Instruction* seed, int64_t target,
            std::vector<const Instruction*>* out);
  std::unique_ptr<Module> Build(const Module& module, const Source& src,
                                std::vector<const Instruction*> members,
                                int64_t* params, int64_t* outputs) const;
  // The verifier, cost and interpreter checks; false (and counted) on
  // failure.
  bool Check(const Module& m);

  const ExtractOptions& options_;
  ExtractStats* stats_;
  absl::flat_hash_set<uint64_t>* seen_;
  std::mt19937_64 rng_;
  absl::flat_hash_map<const Instruction*, bool> allowed_;
  absl::flat_hash_map<const Computation*, bool> callee_allowed_;
};

bool Extraction::CalleeAllowed(const Computation* c) {
  auto it = callee_allowed_.find(c);
  if (it != callee_allowed_.end()) return it->second;
  callee_allowed_[c] = false;  // a (malformed) recursive call is refused
  bool ok = true;
  c->ForEachInstruction([&](const Instruction* i) {
    if (!ok) return;
    if (IsExcludedOpcode(i->opcode()) || i->HasSideEffect() ||
        (i->opcode() == Opcode::kConstant &&
         (!i->has_literal() || i->literal().is_unknown())) ||
        (i->opcode() != Opcode::kParameter &&
         IsUnboundedOrUnusual(i->shape()))) {
      ok = false;
      return;
    }
    for (const Computation* callee : i->called_computations()) {
      if (!CalleeAllowed(callee)) {
        ok = false;
        return;
      }
    }
  });
  callee_allowed_[c] = ok;
  return ok;
}

bool Extraction::Allowed(const Instruction* inst) {
  auto it = allowed_.find(inst);
  if (it != allowed_.end()) return it->second;
  bool ok = inst->opcode() != Opcode::kParameter &&
            inst->opcode() != Opcode::kTuple &&
            !IsExcludedOpcode(inst->opcode()) && !inst->HasSideEffect() &&
            !IsUnboundedOrUnusual(inst->shape());
  if (ok) {
    for (const Instruction* op : inst->operands()) {
      if (IsUnboundedOrUnusual(op->shape())) ok = false;
    }
  }
  if (ok) {
    for (const Computation* c : inst->called_computations()) {
      if (c == nullptr || !CalleeAllowed(c)) ok = false;
    }
  }
  allowed_[inst] = ok;
  return ok;
}

bool Extraction::CanJoin(const Instruction* inst, const InstSet& members) {
  if (members.contains(inst) || inst->opcode() == Opcode::kConstant) {
    return false;
  }
  if (inst->opcode() == Opcode::kGetTupleElement &&
      (inst->operand_count() != 1 || !members.contains(inst->operand(0)))) {
    return false;
  }
  return Allowed(inst);
}

std::vector<const Instruction*> Extraction::Outputs(
    const Source& src, const InstSet& members) const {
  std::vector<const Instruction*> out;
  for (const Instruction* m : members) {
    if (m->opcode() == Opcode::kConstant) continue;
    bool is_output = m == src.comp->root_instruction() || m->users().empty();
    for (const Instruction* u : m->users()) {
      if (is_output) break;
      if (!members.contains(u)) is_output = true;
    }
    if (is_output) out.push_back(m);
  }
  std::sort(out.begin(), out.end(),
            [&](const Instruction* a, const Instruction* b) {
              return src.position.at(a) < src.position.at(b);
            });
  return out;
}

bool Extraction::Grow(const Source& src, const Instruction* seed,
                      int64_t target, std::vector<const Instruction*>* out) {
  InstSet members;
  std::vector<const Instruction*> frontier;
  InstSet queued;
  // Adds `x` and the constants it uses; undone if the count (with the
  // output tuple) would pass the maximum.
  auto try_add = [&](const Instruction* x) {
    std::vector<const Instruction*> added = {x};
    for (const Instruction* op : x->operands()) {
      if (IsCopyableConstant(op) && !members.contains(op) &&
          std::find(added.begin(), added.end(), op) == added.end()) {
        added.push_back(op);
      }
    }
    for (const Instruction* a : added) members.insert(a);
    if (Count(src, members) > options_.max_instructions) {
      for (const Instruction* a : added) members.erase(a);
      return false;
    }
    return true;
  };
  auto push_neighbours = [&](const Instruction* x) {
    for (const Instruction* op : x->operands()) {
      if (CanJoin(op, members) && queued.insert(op).second) {
        frontier.push_back(op);
      }
    }
    for (const Instruction* u : x->users()) {
      if (CanJoin(u, members) && queued.insert(u).second) {
        frontier.push_back(u);
      }
    }
  };
  if (!try_add(seed)) return false;
  push_neighbours(seed);
  while (Count(src, members) < target && !frontier.empty()) {
    const size_t i = Draw(frontier.size());
    const Instruction* x = frontier[i];
    frontier[i] = frontier.back();
    frontier.pop_back();
    if (!CanJoin(x, members)) continue;
    if (try_add(x)) push_neighbours(x);
  }
  if (Count(src, members) < options_.min_instructions) return false;
  out->assign(members.begin(), members.end());
  std::sort(out->begin(), out->end(),
            [&](const Instruction* a, const Instruction* b) {
              return src.position.at(a) < src.position.at(b);
            });
  return true;
}

// Callees before callers, each once.
void CollectCallees(const Computation* c,
                    absl::flat_hash_set<const Computation*>* done,
                    std::vector<const Computation*>* order) {
  if (!done->insert(c).second) return;
  c->ForEachInstruction([&](const Instruction* i) {
    for (const Computation* callee : i->called_computations()) {
      CollectCallees(callee, done, order);
    }
  });
  order->push_back(c);
}

std::string UniqueName(const std::string& base,
                       absl::flat_hash_set<std::string>* used) {
  std::string name = base;
  for (int64_t k = 1; !used->insert(name).second; ++k) {
    name = StrCat(base, ".", k);
  }
  return name;
}

std::unique_ptr<Module> Extraction::Build(
    const Module& module, const Source& src,
    std::vector<const Instruction*> members, int64_t* params,
    int64_t* outputs) const {
  InstSet member_set(members.begin(), members.end());
  auto m = std::make_unique<Module>(StrCat(module.name(), "_extract"));

  // Copies of the called computations, their calls redirected.
  absl::flat_hash_set<const Computation*> done;
  std::vector<const Computation*> callees;
  for (const Instruction* x : members) {
    for (const Computation* c : x->called_computations()) {
      CollectCallees(c, &done, &callees);
    }
  }
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  absl::flat_hash_set<std::string> inst_names, comp_names;
  for (const Computation* c : callees) {
    Computation* copy = m->AddComputation(c->Clone(), false);
    comp_map[c] = copy;
    comp_names.insert(copy->name());
    copy->ForEachInstruction(
        [&](const Instruction* i) { inst_names.insert(i->name()); });
  }
  auto map_callees = [&](Instruction* i) {
    std::vector<Computation*> mapped;
    for (Computation* c : i->called_computations()) {
      mapped.push_back(comp_map.at(c));
    }
    i->set_called_computations(std::move(mapped));
  };
  for (const Computation* c : callees) {
    comp_map[c]->ForEachInstruction(map_callees);
  }

  auto entry = std::make_unique<Computation>(
      UniqueName(StrCat(src.comp->name(), ".extract"), &comp_names));
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  ComputationLayout layout;
  for (const Instruction* x : members) {
    for (const Instruction* op : x->operands()) {
      if (member_set.contains(op) || map.contains(op)) continue;
      auto p = std::make_unique<Instruction>(Opcode::kParameter, op->shape());
      p->set_int_attr(static_cast<int64_t>(layout.parameters.size()));
      p->set_name(
          UniqueName(StrCat("param_", layout.parameters.size()), &inst_names));
      layout.parameters.push_back(op->shape());
      map[op] = entry->AddInstruction(std::move(p));
    }
  }
  for (const Instruction* x : members) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : x->operands()) ops.push_back(map.at(op));
    std::unique_ptr<Instruction> c = x->CloneWithNewOperands(ops);
    map_callees(c.get());
    c->set_name(UniqueName(x->name(), &inst_names));
    map[x] = entry->AddInstruction(std::move(c));
  }
  std::vector<const Instruction*> outs = Outputs(src, member_set);
  Instruction* root = nullptr;
  if (outs.size() == 1) {
    root = map.at(outs[0]);
  } else {
    std::vector<Shape> shapes;
    for (const Instruction* o : outs) shapes.push_back(o->shape());
    auto t = std::make_unique<Instruction>(Opcode::kTuple,
                                           Shape::Tuple(std::move(shapes)));
    for (const Instruction* o : outs) t->AppendOperand(map.at(o));
    t->set_name(UniqueName("outputs", &inst_names));
    root = entry->AddInstruction(std::move(t));
  }
  entry->set_root_instruction(root);
  layout.result = root->shape();
  m->AddComputation(std::move(entry), true);
  m->mutable_config()->entry_computation_layout = std::move(layout);
  *params = static_cast<int64_t>(map.size() - members.size());
  *outputs = static_cast<int64_t>(outs.size());
  return m;
}

bool Extraction::Check(const Module& m) {
  if (!VerifyModule(m).ok()) {
    ++stats_->rejected_verifier;
    return false;
  }
  absl::StatusOr<CostProperties> cost =
      CostAnalysis().AnalyzeComputation(*m.entry_computation());
  if (!cost.ok() || cost->unknown || cost->flops > options_.max_flops ||
      cost->bytes_accessed > options_.max_bytes_accessed) {
    ++stats_->rejected_cost;
    return false;
  }
  // Generating inputs is itself slow for big parameters (one normal draw
  // per element), and the cost analysis only sees the parts that are read.
  const std::vector<Shape> shapes = ParameterShapes(*m.entry_computation());
  int64_t input_elements = 0;
  for (const Shape& s : shapes) input_elements += ElementsInRecursive(s);
  if (input_elements > options_.max_input_elements) {
    ++stats_->rejected_cost;
    return false;
  }
  auto inputs = GenerateInputs(shapes, options_.input_seed);
  bool ok = inputs.ok();
  if (ok) {
    InterpreterOptions io;
    io.time_limit_seconds = options_.time_limit_seconds;
    io.max_while_iterations = options_.max_while_iterations;
    io.max_live_bytes = options_.max_live_bytes;
    Interpreter interpreter(io);
    ok = interpreter.Run(m, *inputs).ok();
  }
  if (!ok) ++stats_->rejected_interpreter;
  return ok;
}

std::vector<ExtractedSubgraph> Extraction::Run(const Module& module,
                                               int64_t budget) {
  std::vector<ExtractedSubgraph> result;
  rng_.seed(SplitMix64(options_.seed ^ SplitMix64(DagHash(module))));
  const int64_t lo = options_.min_instructions;
  const int64_t hi = options_.max_instructions;

  std::vector<Source> sources;
  for (const Computation* c : SourceComputations(module)) {
    if (c->instruction_count() - c->num_parameters() < lo) continue;
    Source s{c, {}};
    std::vector<Instruction*> order = c->MakeInstructionPostOrder();
    s.position.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      s.position[order[i]] = static_cast<int64_t>(i);
    }
    sources.push_back(std::move(s));
  }
  // Seeds (source index, instruction) in text order, then shuffled
  // (Fisher-Yates with portable draws).
  std::vector<std::pair<size_t, const Instruction*>> seeds;
  for (size_t s = 0; s < sources.size(); ++s) {
    sources[s].comp->ForEachInstruction([&](const Instruction* i) {
      if (CanSeed(i)) seeds.emplace_back(s, i);
    });
  }
  for (size_t i = seeds.size(); i > 1; --i) {
    std::swap(seeds[i - 1], seeds[Draw(i)]);
  }

  const int64_t per_module = options_.per_module_limit;
  int64_t max_attempts = options_.max_attempts_per_module;
  if (max_attempts <= 0) {
    max_attempts = per_module > 0 ? std::max<int64_t>(1000, 20 * per_module)
                                  : static_cast<int64_t>(seeds.size());
  }
  int64_t attempts = 0;
  for (const auto& [s, seed] : seeds) {
    if (budget == 0) break;
    if (per_module > 0 && static_cast<int64_t>(result.size()) >= per_module) {
      break;
    }
    if (attempts++ >= max_attempts) break;
    ++stats_->attempts;
    const Source& src = sources[s];
    const int64_t target = lo + static_cast<int64_t>(Draw(hi - lo + 1));
    std::vector<const Instruction*> members;
    if (!Grow(src, seed, target, &members)) {
      ++stats_->too_small;
      continue;
    }
    ExtractedSubgraph sub;
    sub.module = Build(module, src, std::move(members), &sub.parameter_count,
                       &sub.output_count);
    sub.hash = DagHash(*sub.module);
    if (!seen_->insert(sub.hash).second) {
      ++stats_->duplicates;
      continue;
    }
    if (!Check(*sub.module)) continue;
    sub.source_computation = src.comp->name();
    sub.instruction_count = SubgraphInstructionCount(*sub.module);
    ++stats_->extracted;
    if (budget > 0) --budget;
    result.push_back(std::move(sub));
  }
  return result;
}

}  // namespace

int64_t SubgraphInstructionCount(const Module& module) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return 0;
  return entry->instruction_count() - entry->num_parameters();
}

absl::StatusOr<SubgraphExtractor> SubgraphExtractor::Create(
    const ExtractOptions& options) {
  if (options.min_instructions < 1) {
    return absl::InvalidArgumentError("the minimum size must be at least 1");
  }
  if (options.max_instructions < options.min_instructions) {
    return absl::InvalidArgumentError(
        StrCat("the maximum size (", options.max_instructions,
               ") is below the minimum (", options.min_instructions, ")"));
  }
  if (options.limit < 0 || options.per_module_limit < 0 ||
      options.max_attempts_per_module < 0) {
    return absl::InvalidArgumentError("limits must not be negative");
  }
  return SubgraphExtractor(options);
}

std::vector<ExtractedSubgraph> SubgraphExtractor::Extract(
    const Module& module) {
  if (LimitReached() || module.entry_computation() == nullptr) return {};
  ++stats_.modules;
  const int64_t budget =
      options_.limit > 0 ? options_.limit - stats_.extracted : -1;
  Extraction e(options_, &stats_, &seen_);
  return e.Run(module, budget);
}

absl::StatusOr<std::vector<ExtractedSubgraph>> ExtractSubgraphs(
    const Module& module, const ExtractOptions& options, ExtractStats* stats) {
  absl::StatusOr<SubgraphExtractor> extractor =
      SubgraphExtractor::Create(options);
  if (!extractor.ok()) return extractor.status();
  std::vector<ExtractedSubgraph> out = extractor->Extract(module);
  if (stats != nullptr) *stats = extractor->stats();
  return out;
}

}  // namespace hlogym
