// The HLO verifier: structural checks, per-opcode shape rules (through
// shape_inference.h) and module-wide invariants, following XLA's HloVerifier
// with its default options unless noted.
#include "hlogym/ir/verifier.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/shape_inference.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

constexpr std::string_view kMainThread = "main";

std::string_view ThreadName(std::string_view t) {
  return t.empty() ? kMainThread : t;
}

std::string IntList(std::span<const int64_t> v) { return IntListToString(v); }

bool IsAsyncOp(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate ||
         op == Opcode::kAsyncDone;
}

// Opcodes that may carry called computations.
bool MayCallComputations(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceScatter:
    case Opcode::kReduceWindow:
    case Opcode::kScan:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

// Opcodes whose result XLA compares exactly (no fp-precision slack): they
// move or reinterpret data rather than compute it.
bool ExactShapeOpcode(Opcode op) {
  switch (op) {
    case Opcode::kBitcast:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGetTupleElement:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kOptimizationBarrier:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kTuple:
    case Opcode::kWhile:
      return true;
    default:
      return false;
  }
}

// Opcodes exempt from XLA's mixed-precision operand check.
bool MixedPrecisionExempt(Opcode op) {
  switch (op) {
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kConvolution:
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncStart:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kDomain:
    case Opcode::kFusion:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kReducePrecision:
    case Opcode::kReduceWindow:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kSort:
    case Opcode::kTuple:
    case Opcode::kWhile:
    case Opcode::kAlternatives:  // HloGym's own opcodes
    case Opcode::kScan:
      return true;
    default:
      return false;
  }
}

bool HasDynamicRoot(const Instruction* inst) {
  return inst->attrs().has_dynamic_root;
}

// The root of a parser-built async wrapper whose async op takes its
// operands over several updates (or binds no result yet) is incomplete:
// its operands are only those of the async-start.
bool PartialWrapperRoot(const Instruction* inst) {
  const Computation* c = inst->parent();
  if (c == nullptr || !c->IsAsyncWrapper() || c->root_instruction() != inst) {
    return false;
  }
  if (inst->shape().IsTuple() && inst->shape().tuple_shapes_size() == 0) {
    return true;
  }
  int64_t expected = OpcodeArity(inst->opcode());
  if (!inst->called_computations().empty() &&
      (inst->opcode() == Opcode::kCall || inst->opcode() == Opcode::kFusion)) {
    expected = inst->called_computations()[0]->num_parameters();
  }
  return expected >= 0 && inst->operand_count() < expected;
}

bool HasBuffer(const Shape& s) {
  if (s.IsBuffer()) return true;
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (HasBuffer(e)) return true;
    }
  }
  return false;
}

// Visits every leaf (non-tuple sub-shape) with its index.
void ForEachLeaf(
    const Shape& s, ShapeIndex* index,
    const std::function<void(const Shape&, const ShapeIndex&)>& f) {
  if (s.IsTuple()) {
    for (int64_t i = 0; i < s.tuple_shapes_size(); ++i) {
      index->push_back(i);
      ForEachLeaf(s.tuple_shapes(i), index, f);
      index->pop_back();
    }
    return;
  }
  f(s, *index);
}

std::string IndexText(const ShapeIndex& index) { return IntList(index); }

const FrontendAttribute* FindFrontendAttr(const Instruction* inst,
                                          std::string_view key) {
  for (const FrontendAttribute& a : inst->frontend_attributes()) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

enum class GroupMode {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};

// Parses "{{0,1},{1,2}}" into pairs; nullopt if the text is malformed.
std::optional<std::vector<std::pair<int64_t, int64_t>>> ParsePairs(
    std::string_view text) {
  int depth = 0;
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{') {
      ++depth;
      if (depth == 2) groups.emplace_back();
    } else if (c == '}') {
      --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i + 1;
      while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
      if (depth != 2 || groups.empty()) return std::nullopt;
      groups.back().push_back(std::strtoll(
          std::string(text.substr(i, j - i)).c_str(), nullptr, 10));
      i = j - 1;
    }
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const auto& g : groups) {
    if (g.size() != 2) return std::nullopt;
    pairs.emplace_back(g[0], g[1]);
  }
  return pairs;
}

class Verifier {
 public:
  Verifier(const Module& module, const VerifierOptions& options,
           const std::string& file)
      : module_(module), opts_(options), file_(file) {}

  absl::Status Run();

 private:
  // ---- Messages.
  // "file:line:col: " for the instruction, or for the nearest located
  // instruction of its computation when it has no location of its own.
  std::string Prefix(const Instruction* inst) const {
    if (file_.empty()) return "";
    const Instruction* at = inst;
    if (at != nullptr && at->source_line() <= 0 && at->parent() != nullptr) {
      at = LocatedInstruction(at->parent());
    }
    if (at == nullptr || at->source_line() <= 0) return StrCat(file_, ": ");
    return StrCat(file_, ":", at->source_line(), ":", at->source_column(),
                  ": ");
  }
  static const Instruction* LocatedInstruction(const Computation* c) {
    if (c == nullptr) return nullptr;
    const Instruction* root = c->root_instruction();
    if (root != nullptr && root->source_line() > 0) return root;
    const Instruction* found = nullptr;
    c->ForEachInstruction([&](const Instruction* i) {
      if (found == nullptr && i->source_line() > 0) found = i;
    });
    return found;
  }
  template <typename... Args>
  absl::Status InstError(const Instruction* inst, const Args&... args) const {
    return absl::InvalidArgumentError(
        StrCat(Prefix(inst), "instruction '", inst->name(), "': ", args...));
  }
  template <typename... Args>
  absl::Status CompError(const Computation* c, const Args&... args) const {
    const Instruction* at = LocatedInstruction(c);
    std::string prefix = at != nullptr   ? Prefix(at)
                         : file_.empty() ? std::string()
                                         : StrCat(file_, ": ");
    return absl::InvalidArgumentError(
        StrCat(prefix, "computation '", c->name(), "': ", args...));
  }
  template <typename... Args>
  absl::Status ModError(const Args&... args) const {
    const Instruction* at = LocatedInstruction(module_.entry_computation());
    std::string prefix = at != nullptr   ? Prefix(at)
                         : file_.empty() ? std::string()
                                         : StrCat(file_, ": ");
    return absl::InvalidArgumentError(
        StrCat(prefix, "module '", module_.name(), "': ", args...));
  }
  // Prefixes an inference error with the instruction.
  absl::Status Wrap(const Instruction* inst, const absl::Status& s) const {
    return InstError(inst, std::string(s.message()));
  }

  // ---- Structure.
  absl::Status VerifyStructure();
  absl::Status VerifyComputationStructure(const Computation* c);
  absl::Status VerifyAcyclic(const Computation* c);
  absl::Status VerifyCallGraphAcyclic();

  // ---- Shapes.
  absl::Status VerifyShapeWellFormed(const Instruction* inst, const Shape& s);
  bool ShapesSame(const Shape& a, const Shape& b) const;
  absl::Status CheckShape(const Instruction* inst,
                          const absl::StatusOr<Shape>& inferred);
  absl::Status CheckMixedPrecision(const Instruction* inst);
  absl::Status CheckToApplyParameterTypes(
      const Instruction* inst, std::span<const Shape* const> operands,
      const ProgramShape& to_apply) const;
  absl::Status VerifyNoLayoutChange(const Instruction* inst) const;
  absl::Status VerifyInstruction(const Instruction* inst);
  absl::Status VerifyOperandCount(const Instruction* inst);
  absl::Status VerifyCalledCount(const Instruction* inst);
  absl::Status VerifyGenericAttributes(const Instruction* inst);
  absl::Status VerifySharding(const Instruction* inst, const Sharding& sh,
                              const Shape& shape);
  absl::Status VerifyOrigin(const Instruction* inst);

  // Opcode families.
  absl::Status HandleElementwise(const Instruction* inst);
  absl::Status HandleCompareType(const Instruction* inst);
  absl::Status HandleDot(const Instruction* inst);
  absl::Status HandleFusion(const Instruction* inst);
  absl::Status HandleCall(const Instruction* inst);
  absl::Status HandleWhile(const Instruction* inst);
  absl::Status HandleConditional(const Instruction* inst);
  absl::Status HandleCustomCall(const Instruction* inst);
  absl::Status HandleAliasing(const Instruction* inst,
                              const std::vector<OutputOperandAlias>& aliases,
                              bool compare_layouts);
  absl::Status HandleCollective(const Instruction* inst);
  absl::Status HandleCollectivePermute(const Instruction* inst);
  absl::Status HandleAsync(const Instruction* inst);
  absl::Status HandleSendRecv(const Instruction* inst);
  absl::Status HandleRng(const Instruction* inst);

  absl::Status CheckReplicaGroups(const Instruction* inst, GroupMode mode,
                                  bool uniform);
  absl::Status CheckMeshGroups(const Instruction* inst, std::string_view text);
  absl::StatusOr<GroupMode> GetGroupMode(const Instruction* inst,
                                         bool has_global_ids_flag) const;
  int64_t SubgroupSize(const Instruction* inst, GroupMode mode) const;
  absl::Status CheckShardCount(const Instruction* inst, int64_t shard_count,
                               GroupMode mode);
  std::vector<std::vector<int64_t>> Groups(const Instruction* inst) const;

  // Execution threads of called computations.
  absl::Status CheckCalleeThreads(const Instruction* inst, bool skip_async);
  absl::Status CheckNestedThreads(const Instruction* inst,
                                  const Computation* comp, bool skip_async,
                                  int depth);
  absl::Status CheckConsistentSharding(
      const Instruction* inst, std::span<const Instruction* const> insts);

  // Async helpers.
  const Computation* WrappedComputation(const Instruction* inst) const;
  const Instruction* TraceAsyncSource(const Instruction* value,
                                      std::vector<int64_t> index,
                                      int depth) const;

  // ---- Module-wide checks.
  absl::Status VerifyAsyncPairs();
  absl::Status VerifyChannels();
  absl::Status VerifyEntryLayoutAndAliases();
  absl::Status VerifyBuffers();

  const Module& module_;
  const VerifierOptions& opts_;
  const std::string& file_;
  int64_t replica_count_ = 1;
  int64_t num_partitions_ = 1;
  // The instructions calling each computation.
  absl::flat_hash_map<const Computation*, std::vector<const Instruction*>>
      callers_;
  absl::flat_hash_set<const Computation*> module_computations_;
  // Execution threads set by async ops on their wrapped computations.
  absl::flat_hash_map<const Computation*, std::string> async_thread_;
  std::string_view Thread(const Computation* c) const {
    auto it = async_thread_.find(c);
    return it != async_thread_.end() ? std::string_view(it->second)
                                     : ThreadName(c->execution_thread());
  }
  void ComputeAsyncThreads();
  // Computations whose nested thread names were already checked.
  absl::flat_hash_set<std::pair<const Computation*, bool>> nested_threads_ok_;
};

// ---------------------------------------------------------------------------
// Structure.

absl::Status Verifier::VerifyStructure() {
  const Computation* entry = module_.entry_computation();
  if (entry == nullptr) return ModError("module has no entry computation");
  absl::flat_hash_set<std::string> names;
  for (const auto& c : module_.computations()) {
    if (c == nullptr) return ModError("module holds a null computation");
    module_computations_.insert(c.get());
    if (!names.insert(c->name()).second) {
      return CompError(c.get(), "computation name is not unique in the module");
    }
  }
  if (!module_computations_.contains(entry)) {
    return ModError("entry computation '", entry->name(),
                    "' is not part of the module");
  }
  if (entry->IsFusionComputation()) {
    return CompError(entry,
                     "the entry computation cannot be a fusion "
                     "computation");
  }
  for (const auto& c : module_.computations()) {
    if (absl::Status s = VerifyComputationStructure(c.get()); !s.ok()) {
      return s;
    }
  }
  for (const auto& c : module_.computations()) {
    c->ForEachInstruction([&](Instruction* inst) {
      for (Computation* callee : inst->called_computations()) {
        if (callee != nullptr) callers_[callee].push_back(inst);
      }
    });
  }
  if (absl::Status s = VerifyCallGraphAcyclic(); !s.ok()) return s;
  ComputeAsyncThreads();
  for (const auto& c : module_.computations()) {
    if (absl::Status s = VerifyAcyclic(c.get()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifyComputationStructure(const Computation* c) {
  if (c->instruction_count() == 0) {
    return CompError(c, "computation has no instructions");
  }
  const Instruction* root = c->root_instruction();
  if (root == nullptr) return CompError(c, "computation has no ROOT");
  if (root->parent() != c) {
    return CompError(c, "ROOT '", root->name(),
                     "' does not belong to the computation");
  }
  absl::flat_hash_set<std::string_view> names;
  std::vector<const Instruction*> params;
  absl::Status status = absl::OkStatus();
  c->ForEachInstruction([&](const Instruction* inst) {
    if (!status.ok()) return;
    if (inst->parent() != c) {
      status = InstError(inst, "instruction's parent is not its computation '",
                         c->name(), "'");
      return;
    }
    if (!names.insert(inst->name()).second) {
      status =
          InstError(inst, "instruction name is not unique in computation '",
                    c->name(), "'");
      return;
    }
    if (inst->opcode() == Opcode::kParameter) params.push_back(inst);
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const Instruction* op = inst->operand(i);
      if (op == nullptr) {
        status = InstError(inst, "operand ", i, " is null");
        return;
      }
      if (op->parent() != c) {
        status = InstError(inst, "operand ", i, " ('", op->name(),
                           "') is in a different computation");
        return;
      }
    }
    for (const Instruction* p : inst->control_predecessors()) {
      if (p == nullptr || p->parent() != c) {
        status = InstError(inst, "control predecessor '",
                           p ? p->name() : std::string("null"),
                           "' is in a different computation");
        return;
      }
    }
    for (const Instruction* p : inst->control_successors()) {
      if (p == nullptr || p->parent() != c) {
        status = InstError(inst, "control successor '",
                           p ? p->name() : std::string("null"),
                           "' is in a different computation");
        return;
      }
    }
    if (!inst->called_computations().empty() &&
        !MayCallComputations(inst->opcode())) {
      status = InstError(inst, OpcodeName(inst->opcode()),
                         " cannot call computations");
      return;
    }
    for (const Computation* callee : inst->called_computations()) {
      if (callee == nullptr || !module_computations_.contains(callee)) {
        status = InstError(inst,
                           "calls a computation that is not part of "
                           "the module");
        return;
      }
    }
  });
  if (!status.ok()) return status;
  // Parameter numbers must be exactly 0..n-1.
  std::vector<const Instruction*> by_number(params.size(), nullptr);
  for (const Instruction* p : params) {
    const int64_t n = p->parameter_number();
    if (n < 0 || n >= static_cast<int64_t>(params.size())) {
      return InstError(p, "parameter number ", n,
                       " is out of range: ", "computation '", c->name(),
                       "' has ", params.size(), " parameters, numbered 0..",
                       params.size() - 1);
    }
    if (by_number[n] != nullptr) {
      return InstError(p, "parameter number ", n, " is used twice (also by '",
                       by_number[n]->name(), "')");
    }
    by_number[n] = p;
  }
  if (c->num_parameters() != static_cast<int64_t>(params.size())) {
    return CompError(c, "computation registers ", c->num_parameters(),
                     " parameters but has ", params.size(),
                     " parameter instructions");
  }
  for (int64_t i = 0; i < c->num_parameters(); ++i) {
    if (c->parameter_instruction(i) != by_number[i]) {
      return CompError(c, "parameter ", i, " is not registered");
    }
  }
  return absl::OkStatus();
}

// As in XLA, an async op runs its wrapped computation, and everything that
// computation calls, on the op's async_execution_thread (default "main"),
// whatever thread the computations were declared with. Computations are
// visited callees first, so an outer async op overrides an inner one.
void Verifier::ComputeAsyncThreads() {
  for (const auto& c : module_.computations()) {
    c->ForEachInstruction([&](const Instruction* inst) {
      if (inst->opcode() != Opcode::kAsyncStart ||
          inst->called_computations().empty()) {
        return;
      }
      const std::string thread(
          ThreadName(inst->attrs().async_execution_thread));
      std::vector<const Computation*> stack = {inst->called_computations()[0]};
      absl::flat_hash_set<const Computation*> seen;
      while (!stack.empty()) {
        const Computation* cur = stack.back();
        stack.pop_back();
        if (!seen.insert(cur).second) continue;
        async_thread_[cur] = thread;
        cur->ForEachInstruction([&](const Instruction* i) {
          for (const Computation* callee : i->called_computations()) {
            stack.push_back(callee);
          }
        });
      }
    });
  }
}

absl::Status Verifier::VerifyAcyclic(const Computation* c) {
  // Iterative DFS over operand and control-predecessor edges. The visit
  // state lives in Instruction::scratch (0 new, 1 open, 2 done): no hash
  // lookups per edge on 100k-instruction graphs.
  c->ForEachInstruction([](const Instruction* i) { i->scratch = 0; });
  std::vector<std::pair<const Instruction*, size_t>> stack;
  auto edges = [](const Instruction* i) {
    return static_cast<size_t>(i->operand_count()) +
           i->control_predecessors().size();
  };
  auto edge = [](const Instruction* i, size_t k) -> const Instruction* {
    if (k < static_cast<size_t>(i->operand_count())) return i->operand(k);
    return i->control_predecessors()[k - i->operand_count()];
  };
  absl::Status status = absl::OkStatus();
  c->ForEachInstruction([&](const Instruction* start) {
    if (!status.ok() || start->scratch != 0) return;
    start->scratch = 1;
    stack.emplace_back(start, 0);
    while (!stack.empty()) {
      auto& [inst, k] = stack.back();
      if (k == edges(inst)) {
        inst->scratch = 2;
        stack.pop_back();
        continue;
      }
      const Instruction* next = edge(inst, k++);
      if (next->parent() != c) continue;  // reported by the structure check
      if (next->scratch == 0) {
        next->scratch = 1;
        stack.emplace_back(next, 0);
      } else if (next->scratch == 1) {
        status = InstError(next,
                           "instruction is part of a cycle through "
                           "operands or control edges");
        stack.clear();
        return;
      }
    }
  });
  return status;
}

absl::Status Verifier::VerifyCallGraphAcyclic() {
  absl::flat_hash_map<const Computation*, int> state;
  std::function<absl::Status(const Computation*)> visit =
      [&](const Computation* c) -> absl::Status {
    state[c] = 1;
    absl::Status status = absl::OkStatus();
    c->ForEachInstruction([&](const Instruction* inst) {
      if (!status.ok()) return;
      for (const Computation* callee : inst->called_computations()) {
        auto it = state.find(callee);
        if (it == state.end()) {
          status = visit(callee);
          if (!status.ok()) return;
        } else if (it->second == 1) {
          status = InstError(inst, "calls computation '", callee->name(),
                             "' recursively");
          return;
        }
      }
    });
    state[c] = 2;
    return status;
  };
  for (const auto& c : module_.computations()) {
    if (!state.contains(c.get())) {
      if (absl::Status s = visit(c.get()); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Shape helpers.

absl::Status Verifier::VerifyShapeWellFormed(const Instruction* inst,
                                             const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (absl::Status st = VerifyShapeWellFormed(inst, e); !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }
  if (s.IsBuffer()) {
    if (s.tuple_shapes_size() != 1 || !s.buffer_shape().IsArray()) {
      return InstError(inst, "buffer shape ", ShapeText(s),
                       " must wrap an array");
    }
    return VerifyShapeWellFormed(inst, s.buffer_shape());
  }
  if (!s.IsArray()) {
    if (s.element_type() == PrimitiveType::kInvalid) {
      return InstError(inst, "shape has no element type");
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < s.rank(); ++i) {
    const int64_t d = s.dimensions(i);
    if (d < 0 && d != Shape::kUnboundedSize) {
      return InstError(inst, "shape ", ShapeText(s),
                       " has a negative dimension size");
    }
  }
  if (s.has_layout()) {
    const Layout& l = s.layout();
    if (static_cast<int64_t>(l.minor_to_major.size()) != s.rank()) {
      return InstError(inst, "layout of ", s.ToString(),
                       " has a minor-to-major size different from the rank");
    }
    std::vector<bool> seen(s.rank(), false);
    for (int64_t d : l.minor_to_major) {
      if (d < 0 || d >= s.rank() || seen[d]) {
        return InstError(inst, "layout of ", s.ToString(),
                         " is not a permutation of the dimensions");
      }
      seen[d] = true;
    }
    // Element sizes in a layout are only meaningful for packed sub-byte
    // types (as XLA's CPU/GPU shape verifier requires).
    if (l.tail().element_size_in_bits != 0 && BitWidth(s.element_type()) >= 8) {
      return InstError(inst, "layout of ", s.ToString(),
                       " sets an element size in bits, which only sub-byte "
                       "types may have");
    }
  }
  return absl::OkStatus();
}

bool Verifier::ShapesSame(const Shape& a, const Shape& b) const {
  if (!opts_.layout_sensitive) return a.Compatible(b);
  if (!a.Compatible(b)) return false;
  if (a.IsTuple()) {
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!ShapesSame(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (a.IsArray() && a.has_layout() && b.has_layout()) {
    return a.layout().minor_to_major == b.layout().minor_to_major;
  }
  return true;
}

absl::Status Verifier::CheckMixedPrecision(const Instruction* inst) {
  if (MixedPrecisionExempt(inst->opcode())) return absl::OkStatus();
  PrimitiveType fp = PrimitiveType::kInvalid;
  for (const Instruction* op : inst->operands()) {
    ShapeIndex index;
    bool mixed = false;
    ForEachLeaf(op->shape(), &index, [&](const Shape& s, const ShapeIndex&) {
      if (!s.IsArray() || !IsFloatingPointType(s.element_type())) return;
      if (fp == PrimitiveType::kInvalid) {
        fp = s.element_type();
      } else if (fp != s.element_type()) {
        mixed = true;
      }
    });
    if (mixed) {
      return InstError(inst,
                       "Seen floating point types of different "
                       "precisions, but mixed precision is disallowed");
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckShape(const Instruction* inst,
                                  const absl::StatusOr<Shape>& inferred) {
  if (!inferred.ok()) return Wrap(inst, inferred.status());
  if (!opts_.allow_mixed_precision) {
    if (absl::Status s = CheckMixedPrecision(inst); !s.ok()) return s;
  }
  const Shape& actual = inst->shape();
  bool equal;
  if (ExactShapeOpcode(inst->opcode())) {
    equal = ShapesSame(actual, *inferred);
  } else {
    equal = CompatibleShapes(actual, *inferred, opts_.allow_mixed_precision);
  }
  if (!equal) {
    return InstError(inst, "expected shape ", ShapeText(*inferred),
                     ", actual shape is ", ShapeText(actual));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Per-instruction checks.

absl::Status Verifier::VerifyOperandCount(const Instruction* inst) {
  const Opcode op = inst->opcode();
  const int64_t n = inst->operand_count();
  int64_t expected = OpcodeArity(op);
  switch (op) {
    case Opcode::kAsyncUpdate:
      if (n < 1) return InstError(inst, "async-update needs an operand");
      return absl::OkStatus();
    case Opcode::kRng:
      // A third (shape) operand appears in some modules.
      if (n < 2) return InstError(inst, "rng needs 2 operands, got ", n);
      return absl::OkStatus();
    case Opcode::kDynamicReshape:
      if (n < 1) return InstError(inst, "dynamic-reshape needs an operand");
      return absl::OkStatus();
    case Opcode::kConvolution:
    case Opcode::kDot:
      // Sparse operands come with their metadata as extra operands.
      if (!inst->attrs().sparsity_config.empty() && n >= 2) {
        return absl::OkStatus();
      }
      break;
    default:
      break;
  }
  if (expected >= 0 && n != expected) {
    return InstError(inst, "expected ", expected, " operands for ",
                     OpcodeName(op), ", got ", n);
  }
  // Variadic opcodes that still need some operands.
  int64_t minimum = 0;
  switch (op) {
    case Opcode::kDynamicSlice:
    case Opcode::kConditional:
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      minimum = 1;
      break;
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      minimum = 2;
      break;
    case Opcode::kScatter:
      minimum = 3;
      break;
    default:
      break;
  }
  if (n < minimum) {
    return InstError(inst, OpcodeName(op), " needs at least ", minimum,
                     " operand(s), got ", n);
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifyCalledCount(const Instruction* inst) {
  const auto& called = inst->called_computations();
  int expected = -1;
  switch (inst->opcode()) {
    case Opcode::kWhile:
    case Opcode::kSelectAndScatter:
      expected = 2;
      break;
    case Opcode::kFusion:
    case Opcode::kCall:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kAsyncStart:
    case Opcode::kScan:
      expected = 1;
      break;
    case Opcode::kConditional:
      if (called.empty()) {
        return InstError(inst, "conditional needs branch computations");
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
  if (static_cast<int>(called.size()) != expected) {
    return InstError(inst, OpcodeName(inst->opcode()), " must call ", expected,
                     " computation(s), calls ", called.size());
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifySharding(const Instruction* inst,
                                      const Sharding& sh, const Shape& shape) {
  switch (sh.kind) {
    case Sharding::Kind::kMaximal:
      if (sh.device < 0) {
        return InstError(inst, "maximal sharding device ", sh.device,
                         " must be non-negative");
      }
      return absl::OkStatus();
    case Sharding::Kind::kTiled: {
      if (!shape.IsArray()) return absl::OkStatus();
      int64_t subgroups = static_cast<int64_t>(sh.last_tile_dims.size()) +
                          (sh.last_tile_dim_replicate ? 1 : 0);
      int64_t tiled = static_cast<int64_t>(sh.tile_dims.size()) - subgroups;
      if (tiled != shape.rank()) {
        return InstError(inst,
                         "sharding tile assignment dimensions "
                         "(excluding subgroups) is different than the "
                         "input rank: ",
                         tiled, " vs ", shape.rank(), " for ",
                         ShapeText(shape));
      }
      for (int64_t d : sh.devices) {
        if (d < 0) {
          return InstError(inst, "sharding device ", d, " is negative");
        }
      }
      return absl::OkStatus();
    }
    case Sharding::Kind::kTuple: {
      if (!shape.IsTuple()) return absl::OkStatus();
      std::vector<const Shape*> leaves;
      ShapeIndex index;
      ForEachLeaf(shape, &index, [&](const Shape& s, const ShapeIndex&) {
        leaves.push_back(&s);
      });
      if (sh.tuple_elements.size() != leaves.size()) {
        // An empty tuple sharding or one per top-level element are accepted.
        return absl::OkStatus();
      }
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (absl::Status s =
                VerifySharding(inst, sh.tuple_elements[i], *leaves[i]);
            !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

// Checks that origin={...} has the tree structure of the shape and no empty
// leaves.
absl::Status Verifier::VerifyOrigin(const Instruction* inst) {
  std::string_view text = inst->attrs().origin_text;
  if (text.empty()) return absl::OkStatus();
  // Strip the outer braces of the attribute value.
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) {
      s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) {
      s.remove_suffix(1);
    }
    return s;
  };
  text = trim(text);
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}') {
    text = trim(text.substr(1, text.size() - 2));
  }
  if (text.empty() || text.front() == '[') return absl::OkStatus();
  size_t pos = 0;
  std::function<bool(const Shape&)> parse = [&](const Shape& s) -> bool {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (pos >= text.size()) return false;
    if (text[pos] == '(') {
      if (!s.IsTuple()) return false;
      ++pos;
      int64_t i = 0;
      while (true) {
        while (pos < text.size() && text[pos] == ' ') ++pos;
        if (pos < text.size() && text[pos] == ')') {
          ++pos;
          break;
        }
        if (i >= s.tuple_shapes_size()) return false;
        if (!parse(s.tuple_shapes(i++))) return false;
        while (pos < text.size() && text[pos] == ' ') ++pos;
        if (pos < text.size() && text[pos] == ',') ++pos;
      }
      return i == s.tuple_shapes_size();
    }
    if (text[pos] != '{' || s.IsTuple()) return false;
    // A leaf: {"name" {index}} ; an empty {} leaf is not allowed.
    int depth = 0;
    size_t start = pos;
    bool in_string = false;
    for (; pos < text.size(); ++pos) {
      char c = text[pos];
      if (in_string) {
        if (c == '\\') {
          ++pos;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth == 0) {
          ++pos;
          break;
        }
      }
    }
    std::string_view leaf = trim(text.substr(start + 1, pos - start - 2));
    return !leaf.empty();
  };
  if (!parse(inst->shape())) {
    return InstError(inst, "origin ", inst->attrs().origin_text,
                     " does not match the structure of shape ",
                     ShapeText(inst->shape()), " or has an empty leaf");
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifyGenericAttributes(const Instruction* inst) {
  const InstructionAttrs& a = inst->attrs();
  if (a.sharding.has_value()) {
    if (absl::Status s = VerifySharding(inst, *a.sharding, inst->shape());
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = VerifyOrigin(inst); !s.ok()) return s;
  if (!a.result_accuracy_text.empty()) {
    if (!IsTranscendental(inst->opcode())) {
      return InstError(inst,
                       "unary op with result accuracy is not supported "
                       "for ",
                       OpcodeName(inst->opcode()));
    }
    const std::string& t = a.result_accuracy_text;
    size_t m = t.find("mode=");
    if (m != std::string::npos) {
      std::string_view mode = std::string_view(t).substr(m + 5);
      size_t end = mode.find_first_of(",} ");
      mode = mode.substr(0, end);
      if (mode != "default" && mode != "highest" && mode != "DEFAULT" &&
          mode != "HIGHEST") {
        return InstError(inst, "unknown result accuracy mode '", mode, "'");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleCompareType(const Instruction* inst) {
  const ComparisonType type = inst->comparison_type();
  if (type == ComparisonType::kDefault) return absl::OkStatus();
  const PrimitiveType t = inst->operand(1)->shape().element_type();
  if (IsFloatingPointType(t) || IsComplexType(t)) {
    if (type != ComparisonType::kFloat && type != ComparisonType::kTotalOrder) {
      return InstError(inst,
                       "Expected comparison type FLOAT or TOTALORDER "
                       "for ",
                       PrimitiveTypeName(t), " operands, got ",
                       ComparisonTypeName(type));
    }
    return absl::OkStatus();
  }
  const ComparisonType expected = IsSignedIntegralType(t)
                                      ? ComparisonType::kSigned
                                      : ComparisonType::kUnsigned;
  if (type != expected) {
    return InstError(inst, "Expected comparison type ",
                     ComparisonTypeName(expected), " for ",
                     PrimitiveTypeName(t), " operands, got ",
                     ComparisonTypeName(type));
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleElementwise(const Instruction* inst) {
  const Opcode op = inst->opcode();
  if (IsUnaryElementwise(op)) {
    return CheckShape(inst, InferUnaryOpShape(op, inst->operand(0)->shape()));
  }
  if (IsBinaryElementwise(op)) {
    if (absl::Status s =
            CheckShape(inst, InferBinaryOpShape(op, inst->operand(0)->shape(),
                                                inst->operand(1)->shape()));
        !s.ok()) {
      return s;
    }
    if (op == Opcode::kCompare) return HandleCompareType(inst);
    return absl::OkStatus();
  }
  return CheckShape(inst, InferTernaryOpShape(op, inst->operand(0)->shape(),
                                              inst->operand(1)->shape(),
                                              inst->operand(2)->shape()));
}

absl::Status Verifier::HandleDot(const Instruction* inst) {
  const InstructionAttrs& a = inst->attrs();
  const DotDimensionNumbers dnums = a.dot_dnums.value_or(DotDimensionNumbers());
  const int nibbles = static_cast<int>(std::count(a.operand_precision.begin(),
                                                  a.operand_precision.end(),
                                                  Precision::kPackedNibble));
  if (nibbles == 1) {
    return InstError(inst, "dot cannot have a single packed nibble argument");
  }
  if (nibbles == 2) {
    for (int i = 0; i < 2; ++i) {
      const Shape& s = inst->operand(i)->shape();
      if (!IsIntegralType(s.element_type()) ||
          BitWidth(s.element_type()) != 8) {
        return InstError(inst,
                         "packed nibble precision can only apply to "
                         "8 bit integers, got ",
                         ShapeText(s));
      }
    }
  }
  const std::optional<PrimitiveType> preferred =
      inst->shape().IsArray()
          ? std::optional<PrimitiveType>(inst->shape().element_type())
          : std::nullopt;
  switch (inst->opcode()) {
    case Opcode::kDot:
      return CheckShape(
          inst, InferDotShape(inst->operand(0)->shape(),
                              inst->operand(1)->shape(), dnums, preferred));
    case Opcode::kRaggedDot:
      return CheckShape(
          inst,
          InferRaggedDotShape(
              inst->operand(0)->shape(), inst->operand(1)->shape(),
              inst->operand(2)->shape(), dnums,
              a.ragged_dnums.value_or(RaggedDotDimensionNumbers()), preferred));
    case Opcode::kScaledDot:
      return CheckShape(inst, InferScaledDotShape(inst->operand(0)->shape(),
                                                  inst->operand(1)->shape(),
                                                  inst->operand(2)->shape(),
                                                  inst->operand(3)->shape(),
                                                  dnums, preferred));
    default: {
      if (!a.conv_dnums.has_value()) {
        return InstError(inst, "convolution needs dim_labels");
      }
      // A sparse kernel is stored compressed; its shape is not the dense one.
      if (!a.sparsity_config.empty()) return absl::OkStatus();
      if (nibbles == 2 &&
          (a.feature_group_count != 1 || a.batch_group_count != 1)) {
        return InstError(inst,
                         "packed nibble precision does not support "
                         "group counts");
      }
      return CheckShape(
          inst, InferConvolutionShape(
                    inst->operand(0)->shape(), inst->operand(1)->shape(),
                    a.feature_group_count, a.batch_group_count,
                    a.window.value_or(Window()), *a.conv_dnums, preferred));
    }
  }
}

absl::Status Verifier::CheckNestedThreads(const Instruction* inst,
                                          const Computation* comp,
                                          bool skip_async, int depth) {
  // Each (computation, skip_async) pair needs checking once: the result
  // does not depend on the caller.
  if (depth > 64 || !nested_threads_ok_.insert({comp, skip_async}).second) {
    return absl::OkStatus();
  }
  absl::Status status = absl::OkStatus();
  comp->ForEachInstruction([&](const Instruction* i) {
    if (!status.ok()) return;
    if (skip_async && IsAsyncOp(i->opcode())) return;
    for (const Computation* callee : i->called_computations()) {
      if (Thread(callee) != Thread(comp)) {
        status = InstError(
            inst,
            "Nested computations expects same computation's thread "
            "name: ",
            Thread(callee), " vs ", Thread(comp), ", in called computation `",
            callee->name(), "` vs caller computation `", comp->name(), "`");
        return;
      }
      status = CheckNestedThreads(inst, callee, skip_async, depth + 1);
      if (!status.ok()) return;
    }
  });
  return status;
}

absl::Status Verifier::CheckCalleeThreads(const Instruction* inst,
                                          bool skip_async) {
  for (const Computation* callee : inst->called_computations()) {
    if (Thread(inst->parent()) != Thread(callee)) {
      return InstError(inst,
                       "expects parent computation thread name same as "
                       "called computation's thread name (",
                       Thread(inst->parent()), " vs ", Thread(callee), ")");
    }
    if (absl::Status s = CheckNestedThreads(inst, callee, skip_async, 0);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckConsistentSharding(
    const Instruction* inst, std::span<const Instruction* const> insts) {
  const Instruction* common = nullptr;
  for (const Instruction* i : insts) {
    if (i == nullptr || !i->attrs().sharding.has_value()) continue;
    if (common == nullptr) {
      common = i;
      continue;
    }
    if (!(*i->attrs().sharding == *common->attrs().sharding)) {
      return InstError(inst, "Inconsistent ", OpcodeName(inst->opcode()),
                       " sharding among instructions '", common->name(),
                       "' and '", i->name(), "'");
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleAliasing(
    const Instruction* inst, const std::vector<OutputOperandAlias>& aliases,
    bool compare_layouts) {
  // An async-start's aliases name the wrapped computation's parameters,
  // which later async-updates may still be adding as operands.
  // Output indices likewise refer to the async shape once complete.
  std::vector<const Shape*> operand_shapes;
  std::optional<Shape> final_shape;
  if (inst->opcode() == Opcode::kAsyncStart &&
      !inst->called_computations().empty() &&
      !inst->called_computations()[0]->IsAsyncWrapper()) {
    const Computation* wrapped = inst->called_computations()[0];
    std::vector<Shape> params;
    for (const Instruction* p : wrapped->parameter_instructions()) {
      // Operands the start already has stand for their parameters.
      const int64_t k = static_cast<int64_t>(operand_shapes.size());
      operand_shapes.push_back(
          k < inst->operand_count() ? &inst->operand(k)->shape() : &p->shape());
      params.push_back(p->shape());
    }
    std::vector<Shape> elems = {Shape::Tuple(std::move(params)),
                                wrapped->root_instruction()->shape()};
    const Shape& s = inst->shape();
    for (int64_t i = 2; s.IsTuple() && i < s.tuple_shapes_size(); ++i) {
      elems.push_back(s.tuple_shapes(i));
    }
    final_shape = Shape::Tuple(std::move(elems));
  } else {
    for (const Instruction* o : inst->operands()) {
      operand_shapes.push_back(&o->shape());
    }
  }
  for (const OutputOperandAlias& a : aliases) {
    if (a.operand < 0 ||
        a.operand >= static_cast<int64_t>(operand_shapes.size())) {
      return InstError(inst, "invalid aliasing operand index ", a.operand);
    }
    const Shape* out = (final_shape.has_value() ? *final_shape : inst->shape())
                           .SubShape(a.output_index);
    if (out == nullptr) {
      return InstError(inst, "invalid aliasing output shape index ",
                       IndexText(a.output_index));
    }
    // Async results that are not bound yet ("()") alias nothing.
    if (IsAsyncOp(inst->opcode()) && out->IsTuple() &&
        out->tuple_shapes_size() == 0) {
      continue;
    }
    const Shape* in = operand_shapes[a.operand]->SubShape(a.operand_index);
    if (in == nullptr) {
      return InstError(inst, "invalid aliasing operand shape index ",
                       IndexText(a.operand_index));
    }
    // A buffer aliases its array contents (Pin/Unpin).
    const Shape& o =
        out->IsBuffer() && !in->IsBuffer() ? out->buffer_shape() : *out;
    const Shape& i =
        in->IsBuffer() && !out->IsBuffer() ? in->buffer_shape() : *in;
    bool same = o.Compatible(i);
    if (same && (compare_layouts || opts_.layout_sensitive) && o.IsArray() &&
        o.has_layout() && i.has_layout()) {
      same = o.layout().minor_to_major == i.layout().minor_to_major;
    }
    if (!same) {
      return InstError(inst, "different aliasing shapes: output ",
                       IndexText(a.output_index), " is ", out->ToString(),
                       " but operand ", a.operand, " at ",
                       IndexText(a.operand_index), " is ", in->ToString());
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleFusion(const Instruction* inst) {
  const Computation* fused = inst->called_computations()[0];
  if (absl::Status s = CheckCalleeThreads(inst, /*skip_async=*/false);
      !s.ok()) {
    return s;
  }
  const Shape& root = fused->root_instruction()->shape();
  if (!ShapesSame(inst->shape(), root)) {
    return InstError(inst, "Fused computation shape (", ShapeText(root),
                     ") is not equal to the fusion shape (",
                     ShapeText(inst->shape()), ")");
  }
  if (fused->num_parameters() != inst->operand_count()) {
    return InstError(inst, "fused parameter count (", fused->num_parameters(),
                     ") does not match the number of operands (",
                     inst->operand_count(), ")");
  }
  for (int64_t i = 0; i < fused->num_parameters(); ++i) {
    if (!ShapesSame(fused->parameter_instruction(i)->shape(),
                    inst->operand(i)->shape())) {
      return InstError(inst, "shape mismatch between fused parameter ", i, " (",
                       ShapeText(fused->parameter_instruction(i)->shape()),
                       ") and its operand (",
                       ShapeText(inst->operand(i)->shape()), ")");
    }
  }
  return HandleAliasing(inst, inst->attrs().output_to_operand_aliasing, false);
}

absl::Status Verifier::HandleCall(const Instruction* inst) {
  const Computation* callee = inst->to_apply();
  if (absl::Status s = CheckCalleeThreads(inst, /*skip_async=*/true); !s.ok()) {
    return s;
  }
  if (callee->num_parameters() != inst->operand_count()) {
    return InstError(inst, "expected computation '", callee->name(),
                     "' to have ", inst->operand_count(), " parameters, has ",
                     callee->num_parameters());
  }
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    const Instruction* p = callee->parameter_instruction(i);
    if (!ShapesSame(inst->operand(i)->shape(), p->shape())) {
      return InstError(inst, "operand ", i, " shape ",
                       ShapeText(inst->operand(i)->shape()),
                       " does not match parameter '", p->name(), "' shape ",
                       ShapeText(p->shape()));
    }
  }
  if (absl::Status s = CheckShape(inst, callee->root_instruction()->shape());
      !s.ok()) {
    return s;
  }
  if (inst->attrs().is_composite) {
    const FrontendAttribute* name = FindFrontendAttr(inst, "composite.name");
    if (name == nullptr || name->value.empty()) {
      return InstError(inst,
                       "a composite call needs a non-empty "
                       "composite.name frontend attribute");
    }
    if (const FrontendAttribute* v =
            FindFrontendAttr(inst, "composite.version")) {
      const std::string& t = v->value;
      bool ok = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
      if (!ok) {
        return InstError(inst,
                         "composite.version must be a non-negative "
                         "integer, got '",
                         t, "'");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleWhile(const Instruction* inst) {
  const Computation* cond = inst->called_computations()[0];
  const Computation* body = inst->called_computations()[1];
  if (cond->num_parameters() != 1) {
    return InstError(inst, "while condition '", cond->name(),
                     "' must have exactly 1 parameter, has ",
                     cond->num_parameters());
  }
  if (body->num_parameters() != 1) {
    return InstError(inst, "while body '", body->name(),
                     "' must have exactly 1 parameter, has ",
                     body->num_parameters());
  }
  if (absl::Status s = CheckCalleeThreads(inst, /*skip_async=*/true); !s.ok()) {
    return s;
  }
  const Shape& init = inst->operand(0)->shape();
  if (!ShapesSame(init, body->parameter_instruction(0)->shape())) {
    return InstError(inst, "while operand ", ShapeText(init),
                     " shape does not match parameter of body '", body->name(),
                     "' (", ShapeText(body->parameter_instruction(0)->shape()),
                     ")");
  }
  if (!ShapesSame(init, cond->parameter_instruction(0)->shape())) {
    return InstError(inst, "while operand ", ShapeText(init),
                     " shape does not match parameter of condition '",
                     cond->name(), "' (",
                     ShapeText(cond->parameter_instruction(0)->shape()), ")");
  }
  const Shape& cond_root = cond->root_instruction()->shape();
  if (!cond_root.Compatible(Shape::Scalar(PrimitiveType::kPred))) {
    return InstError(inst, "while condition '", cond->name(),
                     "' must return pred[], returns ", ShapeText(cond_root));
  }
  const Shape& body_root = body->root_instruction()->shape();
  if (absl::Status s = CheckShape(inst, body_root); !s.ok()) return s;
  const Instruction* related[] = {inst, body->root_instruction(),
                                  body->parameter_instruction(0),
                                  cond->parameter_instruction(0)};
  return CheckConsistentSharding(inst, related);
}

absl::Status Verifier::HandleConditional(const Instruction* inst) {
  const auto& branches = inst->called_computations();
  for (const Computation* b : branches) {
    if (b->num_parameters() != 1) {
      return InstError(inst, "branch computation '", b->name(),
                       "' must have 1 parameter, has ", b->num_parameters());
    }
  }
  if (absl::Status s = CheckCalleeThreads(inst, /*skip_async=*/true); !s.ok()) {
    return s;
  }
  std::vector<ProgramShape> programs;
  for (const Computation* b : branches) {
    programs.push_back(ComputeProgramShape(*b));
  }
  std::vector<const Shape*> operands;
  for (int64_t i = 1; i < inst->operand_count(); ++i) {
    operands.push_back(&inst->operand(i)->shape());
  }
  auto inferred =
      InferConditionalShape(inst->operand(0)->shape(), programs, operands);
  if (!inferred.ok()) return Wrap(inst, inferred.status());
  for (const Computation* b : branches) {
    if (absl::Status s = CheckShape(inst, b->root_instruction()->shape());
        !s.ok()) {
      return s;
    }
  }
  std::vector<const Instruction*> related = {inst};
  for (const Computation* b : branches) {
    related.push_back(b->root_instruction());
  }
  return CheckConsistentSharding(inst, related);
}

absl::Status Verifier::HandleCustomCall(const Instruction* inst) {
  const InstructionAttrs& a = inst->attrs();
  if (absl::Status s = CheckCalleeThreads(inst, /*skip_async=*/true); !s.ok()) {
    return s;
  }
  if (a.operand_layout_constraints.has_value() &&
      a.custom_call_target != "LayoutConstraint") {
    const auto& constraints = *a.operand_layout_constraints;
    if (static_cast<int64_t>(constraints.size()) != inst->operand_count()) {
      return InstError(inst, "custom-call has ", constraints.size(),
                       " operand layout constraints for ",
                       inst->operand_count(), " operands");
    }
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      if (!inst->operand(i)->shape().Compatible(constraints[i])) {
        return InstError(inst, "operand ", i, " shape ",
                         ShapeText(inst->operand(i)->shape()),
                         " does not match its layout constraint ",
                         constraints[i].ToString());
      }
    }
  }
  if (a.custom_call_target == "GetRngSeed") {
    if (inst->operand_count() != 0) {
      return InstError(inst, "GetRngSeed custom-call takes no operands");
    }
    if (!inst->shape().Compatible(Shape::Scalar(PrimitiveType::kU64))) {
      return InstError(inst,
                       "GetRngSeed custom-call must return u64[], "
                       "returns ",
                       ShapeText(inst->shape()));
    }
  }
  return HandleAliasing(inst, a.output_to_operand_aliasing, false);
}

// ---------------------------------------------------------------------------
// Collectives.

std::vector<std::vector<int64_t>> Verifier::Groups(
    const Instruction* inst) const {
  const auto& rg = inst->attrs().replica_groups;
  if (!rg.has_value()) return {};
  return rg->Expand();
}

absl::StatusOr<GroupMode> Verifier::GetGroupMode(
    const Instruction* inst, bool has_global_ids_flag) const {
  const bool has_channel = inst->attrs().channel_id.has_value();
  const bool global = inst->attrs().use_global_device_ids;
  if (!has_channel) {
    if (has_global_ids_flag && global) {
      return InstError(inst,
                       "Invalid combination of has_channel_id and "
                       "use_global_device_ids");
    }
    return GroupMode::kCrossReplica;
  }
  if (!has_global_ids_flag) return GroupMode::kCrossPartition;
  return global ? GroupMode::kFlattenedId
                : GroupMode::kCrossReplicaAndPartition;
}

int64_t Verifier::SubgroupSize(const Instruction* inst, GroupMode mode) const {
  const auto groups = Groups(inst);
  const bool mesh =
      inst->attrs().replica_groups.has_value() &&
      inst->attrs().replica_groups->form == ReplicaGroups::Form::kMesh;
  if (mesh) return 1;  // unknown: the checks that use it are skipped
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition: {
      int64_t size = groups.empty() ? replica_count_
                                    : static_cast<int64_t>(groups[0].size());
      if (mode == GroupMode::kCrossReplicaAndPartition) size *= num_partitions_;
      return size;
    }
    case GroupMode::kFlattenedId:
      return groups.empty() ? 1 : static_cast<int64_t>(groups[0].size());
    case GroupMode::kCrossPartition:
      return groups.empty() ? num_partitions_
                            : static_cast<int64_t>(groups[0].size());
  }
  return 1;
}

// Checks mesh['a'=2,'b'=2, device_ids=(...)] {'a', ...}: device ids cover
// the mesh, and the group axes name mesh axes (by name or index).
absl::Status Verifier::CheckMeshGroups(const Instruction* inst,
                                       std::string_view text) {
  const size_t open = text.find('[');
  const size_t close = text.rfind(']');
  if (open == std::string_view::npos || close == std::string_view::npos ||
      close < open) {
    return absl::OkStatus();
  }
  std::string_view body = text.substr(open + 1, close - open - 1);
  std::vector<std::string> axes;
  int64_t devices = 1;
  std::optional<int64_t> device_ids;
  const size_t ids = body.find("device_ids=");
  if (ids != std::string_view::npos) {
    std::string_view list = body.substr(ids + 11);
    body = body.substr(0, ids);
    // (0,1,2) lists ids; [n]T(...) or <=[..] forms are not counted.
    if (!list.empty() && list.front() == '(' &&
        list.find('[') == std::string_view::npos) {
      int64_t count = 0;
      bool digit = false;
      for (char c : list.substr(0, list.find(')'))) {
        const bool d = c >= '0' && c <= '9';
        if (d && !digit) ++count;
        digit = d;
      }
      device_ids = count;
    }
  }
  size_t pos = 0;
  while ((pos = body.find('\'', pos)) != std::string_view::npos) {
    const size_t end = body.find('\'', pos + 1);
    if (end == std::string_view::npos) break;
    axes.emplace_back(body.substr(pos + 1, end - pos - 1));
    const size_t eq = body.find('=', end);
    if (eq != std::string_view::npos) {
      const int64_t size = std::max<int64_t>(
          1, std::strtoll(std::string(body.substr(eq + 1, 8)).c_str(), nullptr,
                          10));
      // Saturate: fuzzed meshes can multiply past int64.
      if (__builtin_mul_overflow(devices, size, &devices)) {
        devices = std::numeric_limits<int64_t>::max();
      }
    }
    pos = end + 1;
  }
  if (device_ids.has_value() && *device_ids != devices) {
    return InstError(inst, "mesh device_ids list ", *device_ids,
                     " devices but the mesh has ", devices);
  }
  std::string_view groups = text.substr(close + 1);
  pos = 0;
  while ((pos = groups.find('\'', pos)) != std::string_view::npos) {
    const size_t end = groups.find('\'', pos + 1);
    if (end == std::string_view::npos) break;
    const std::string name(groups.substr(pos + 1, end - pos - 1));
    bool known = std::find(axes.begin(), axes.end(), name) != axes.end();
    if (!known && !name.empty() &&
        std::all_of(name.begin(), name.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      known = std::strtoll(name.c_str(), nullptr, 10) <
              static_cast<int64_t>(axes.size());
    }
    if (!known) {
      return InstError(inst, "replica group axis '", name,
                       "' is not an axis of the mesh");
    }
    pos = end + 1;
  }
  return absl::OkStatus();
}

absl::Status Verifier::CheckReplicaGroups(const Instruction* inst,
                                          GroupMode mode, bool uniform) {
  const auto& rg = inst->attrs().replica_groups;
  if (rg.has_value() && rg->form == ReplicaGroups::Form::kMesh) {
    return CheckMeshGroups(inst, rg->mesh_text);
  }
  const auto groups = Groups(inst);
  if (groups.empty()) {
    if (mode == GroupMode::kFlattenedId) {
      return InstError(inst,
                       "Replica groups must be specified in "
                       "flattened-id mode");
    }
    return absl::OkStatus();
  }
  absl::flat_hash_set<int64_t> seen;
  for (const auto& g : groups) {
    if (g.empty()) {
      return InstError(inst, "Instruction cannot have an empty replica group");
    }
    for (int64_t id : g) {
      if (!seen.insert(id).second) {
        return InstError(inst, "Replica ", id,
                         " is repeated in instruction's replica-groups");
      }
    }
  }
  const int64_t n = static_cast<int64_t>(seen.size());
  for (int64_t i = 0; i < n; ++i) {
    if (!seen.contains(i)) {
      return InstError(inst, "Replica ", i,
                       " is not named in instruction's replica-groups");
    }
  }
  // XLA also compares the number of ids with the replica/partition counts
  // of the module config; text modules often leave those unset or stale,
  // so that comparison is not made here.
  if (uniform) {
    for (const auto& g : groups) {
      if (g.size() != groups[0].size()) {
        return InstError(inst,
                         "Replica groups expected to be of uniform "
                         "size");
      }
    }
  }
  return absl::OkStatus();
}

// XLA requires the shard count (result/operand size ratio) to equal the
// group size. Group sizes depend on module configs that text modules often
// lack, so only a shard count of 1 across a group of several devices (no
// data exchanged along the dimension) is rejected.
absl::Status Verifier::CheckShardCount(const Instruction* inst,
                                       int64_t shard_count, GroupMode mode) {
  const int64_t subgroup = SubgroupSize(inst, mode);
  if (subgroup > 1 && shard_count == 1) {
    return InstError(inst, "shard_count = ", shard_count,
                     ", subgroup_size = ", subgroup);
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleCollective(const Instruction* inst) {
  const Opcode op = inst->opcode();
  std::vector<const Shape*> operands;
  for (const Instruction* o : inst->operands()) operands.push_back(&o->shape());
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart: {
      auto mode = GetGroupMode(inst, true);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, false); !s.ok()) {
        return s;
      }
      if (inst->attrs().channel_id.has_value() &&
          *inst->attrs().channel_id <= 0) {
        return InstError(inst, "all-reduce channel id must be greater than 0");
      }
      const Computation* reducer = inst->to_apply();
      if (reducer->num_parameters() != 2) {
        return InstError(inst, "all-reduce computation '", reducer->name(),
                         "' must take 2 parameters, takes ",
                         reducer->num_parameters());
      }
      auto reduced = InferAllReduceShape(operands);
      if (op == Opcode::kAllReduceStart && reduced.ok() &&
          inst->shape().IsTuple() && inst->shape().tuple_shapes_size() == 2 &&
          !inst->shape().Compatible(*reduced)) {
        // The older (operands, results) form of all-reduce-start.
        Shape input =
            operands.size() == 1 ? *operands[0] : *InferTupleShape(operands);
        return CheckShape(inst, Shape::Tuple({input, *reduced}));
      }
      return CheckShape(inst, reduced);
    }
    case Opcode::kAllReduceDone: {
      const Shape& s = inst->operand(0)->shape();
      if (!s.Compatible(inst->shape()) && s.IsTuple() &&
          s.tuple_shapes_size() == 2) {
        return CheckShape(inst, s.tuple_shapes(1));
      }
      return CheckShape(inst, s);
    }
    case Opcode::kAllGatherDone: {
      const Shape& s = inst->operand(0)->shape();
      if (!s.IsTuple() || s.tuple_shapes_size() != 2) {
        return InstError(inst,
                         "all-gather-done needs an all-gather-start "
                         "tuple operand, got ",
                         ShapeText(s));
      }
      return CheckShape(inst, s.tuple_shapes(1));
    }
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart: {
      auto mode = GetGroupMode(inst, true);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, true); !s.ok()) {
        return s;
      }
      if (inst->dimensions().size() != 1) {
        return InstError(inst, "all-gather needs exactly one dimension");
      }
      const int64_t dim = inst->dimensions(0);
      if (dim < 0) return InstError(inst, "all-gather dimension is negative");
      if (operands.empty()) return InstError(inst, "all-gather needs operands");
      // The gathered results: the whole shape, tuple elements, or element 1
      // of the start tuple.
      const Shape* out = &inst->shape();
      if (op == Opcode::kAllGatherStart) {
        if (!out->IsTuple() || out->tuple_shapes_size() != 2) {
          return InstError(inst,
                           "all-gather-start must produce an (operands, "
                           "results) tuple, got ",
                           ShapeText(*out));
        }
        out = &out->tuple_shapes(1);
      }
      int64_t shard_count = 1;
      bool have_shard_count = false;
      for (size_t i = 0; i < operands.size(); ++i) {
        const Shape* o = out;
        if (operands.size() > 1) {
          if (!out->IsTuple() || out->tuple_shapes_size() !=
                                     static_cast<int64_t>(operands.size())) {
            return InstError(inst, "all-gather of ", operands.size(),
                             " operands must produce a tuple of ",
                             operands.size(), " arrays, got ", ShapeText(*out));
          }
          o = &out->tuple_shapes(i);
        }
        if (operands.size() > 1 && operands[i]->IsScalar() &&
            o->Compatible(*operands[i])) {
          continue;  // scalars pass through (torch-xla emits them)
        }
        if (!operands[i]->IsArray() || dim >= operands[i]->rank() ||
            !o->IsArray() || dim >= o->rank()) {
          return InstError(inst, "all-gather dimension ", dim,
                           " is out of range for operand ",
                           ShapeText(*operands[i]), " or result ",
                           ShapeText(*o));
        }
        if (!have_shard_count) {
          const int64_t in = operands[i]->dimensions(dim);
          const int64_t res = o->dimensions(dim);
          shard_count = in > 0 ? (res + in - 1) / in : 1;
          if (shard_count <= 0) shard_count = 1;
          have_shard_count = true;
        }
      }
      if (absl::Status s = CheckShardCount(inst, shard_count, *mode); !s.ok()) {
        return s;
      }
      std::vector<const Shape*> arrays;
      for (const Shape* o : operands) {
        if (!(operands.size() > 1 && o->IsScalar())) arrays.push_back(o);
      }
      auto gathered = InferAllGatherShape(arrays, dim, shard_count);
      if (gathered.ok() && arrays.size() != operands.size()) {
        std::vector<Shape> elems;
        size_t next = 0;
        for (const Shape* o : operands) {
          if (o->IsScalar()) {
            elems.push_back(*o);
          } else {
            elems.push_back(arrays.size() == 1 ? *gathered
                                               : gathered->tuple_shapes(next));
            ++next;
          }
        }
        gathered = Shape::Tuple(std::move(elems));
      }
      if (!gathered.ok() || op == Opcode::kAllGather) {
        return CheckShape(inst, gathered);
      }
      Shape input =
          operands.size() == 1 ? *operands[0] : *InferTupleShape(operands);
      return CheckShape(inst, Shape::Tuple({input, *gathered}));
    }
    case Opcode::kReduceScatter: {
      auto mode = GetGroupMode(inst, true);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, true); !s.ok()) {
        return s;
      }
      if (inst->dimensions().size() != 1) {
        return InstError(inst, "reduce-scatter needs exactly one dimension");
      }
      const int64_t dim = inst->dimensions(0);
      if (dim < 0) {
        return InstError(inst, "reduce-scatter dimension is negative");
      }
      if (operands.empty()) {
        return InstError(inst, "reduce-scatter needs operands");
      }
      for (size_t i = 0; i < operands.size(); ++i) {
        const Shape* o = &inst->shape();
        if (operands.size() > 1) {
          if (!o->IsTuple() ||
              o->tuple_shapes_size() != static_cast<int64_t>(operands.size())) {
            return InstError(inst, "reduce-scatter of ", operands.size(),
                             " operands must produce a tuple of ",
                             operands.size(), " arrays, got ", ShapeText(*o));
          }
          o = &o->tuple_shapes(i);
        }
        // Scalars in a variadic reduce-scatter pass through unscattered
        // (as torch-xla emits them).
        if (operands.size() > 1 && operands[i]->IsScalar() &&
            o->Compatible(*operands[i])) {
          continue;
        }
        if (!operands[i]->IsArray() || dim >= operands[i]->rank() ||
            !o->IsArray() || dim >= o->rank()) {
          return InstError(inst, "reduce-scatter dimension ", dim,
                           " is out of range for operand ",
                           ShapeText(*operands[i]), " or result ",
                           ShapeText(*o));
        }
      }
      const Shape& out0 =
          operands.size() == 1 ? inst->shape() : inst->shape().tuple_shapes(0);
      const int64_t in = operands[0]->dimensions(dim);
      const int64_t res = out0.dimensions(dim);
      int64_t shard_count = res > 0 ? (in + res - 1) / res : 1;
      if (shard_count <= 0) shard_count = 1;
      if (absl::Status s = CheckShardCount(inst, shard_count, *mode); !s.ok()) {
        return s;
      }
      std::vector<const Shape*> arrays;
      for (const Shape* o : operands) {
        if (!(operands.size() > 1 && o->IsScalar())) arrays.push_back(o);
      }
      auto scattered = InferReduceScatterShape(arrays, dim, shard_count);
      if (!scattered.ok() || arrays.size() == operands.size()) {
        return CheckShape(inst, scattered);
      }
      std::vector<Shape> elems;
      size_t next = 0;
      for (const Shape* o : operands) {
        if (o->IsScalar()) {
          elems.push_back(*o);
        } else {
          elems.push_back(arrays.size() == 1 ? *scattered
                                             : scattered->tuple_shapes(next));
          ++next;
        }
      }
      return CheckShape(inst, Shape::Tuple(std::move(elems)));
    }
    case Opcode::kAllToAll: {
      auto mode = GetGroupMode(inst, false);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, true); !s.ok()) {
        return s;
      }
      const int64_t split_count = SubgroupSize(inst, *mode);
      if (inst->has_dimensions() && !inst->dimensions().empty()) {
        if (inst->operand_count() != 1) {
          return InstError(inst,
                           "all-to-all with a split dimension takes one "
                           "operand, got ",
                           inst->operand_count());
        }
        const int64_t d = inst->dimensions(0);
        return CheckShape(inst,
                          InferAllToAllShape(*operands[0], d, d, split_count));
      }
      if (split_count != 1 && inst->operand_count() != split_count) {
        return InstError(inst, "all-to-all has ", inst->operand_count(),
                         " operands but the replica group size is ",
                         split_count, " (hlo->operand_count() == split_count)");
      }
      return CheckShape(inst, InferAllToAllTupleShape(operands));
    }
    case Opcode::kRaggedAllToAll: {
      auto mode = GetGroupMode(inst, false);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, true); !s.ok()) {
        return s;
      }
      for (int i = 0; i < 2; ++i) {
        if (!operands[i]->IsArray()) {
          return InstError(inst, "ragged-all-to-all operand ", i,
                           " must be an array, got ", ShapeText(*operands[i]));
        }
      }
      for (int i = 2; i < 6; ++i) {
        const Shape& s = *operands[i];
        if (!s.IsArray() || !IsIntegralType(s.element_type())) {
          return InstError(inst, "RaggedAllToAll operand ", i,
                           " must be an integer array, got ", ShapeText(s));
        }
        if (s.rank() != 1 && s.rank() != 2) {
          return InstError(inst, "RaggedAllToAll operand ", i,
                           " must be rank 1 or 2, got ", ShapeText(s));
        }
        if (!s.Compatible(*operands[2])) {
          return InstError(inst,
                           "RaggedAllToAll operands have different "
                           "shapes: ",
                           ShapeText(*operands[2]), " and ", ShapeText(s));
        }
      }
      return CheckShape(inst, *operands[1]);
    }
    case Opcode::kCollectiveBroadcast: {
      auto mode = GetGroupMode(inst, false);
      if (!mode.ok()) return mode.status();
      if (absl::Status s = CheckReplicaGroups(inst, *mode, true); !s.ok()) {
        return s;
      }
      // With a dynamic root the last operand names the root device.
      if (HasDynamicRoot(inst) && operands.size() > 1) operands.pop_back();
      return CheckShape(inst, InferAllReduceShape(operands));
    }
    default:
      return HandleCollectivePermute(inst);
  }
}

absl::Status Verifier::HandleCollectivePermute(const Instruction* inst) {
  const Opcode op = inst->opcode();
  if (op == Opcode::kCollectivePermuteDone) {
    const Shape& s = inst->operand(0)->shape();
    if (!s.IsTuple() || s.tuple_shapes_size() < 2) {
      return InstError(inst,
                       "collective-permute-done needs a "
                       "collective-permute-start tuple operand, got ",
                       ShapeText(s));
    }
    return CheckShape(inst, s.tuple_shapes(1));
  }
  auto mode = GetGroupMode(inst, false);
  if (!mode.ok()) return mode.status();
  const bool in_place = !inst->attrs().permute_slice_sizes.empty();
  std::vector<const Shape*> operands;
  for (const Instruction* o : inst->operands()) operands.push_back(&o->shape());
  int64_t allowed = 1;
  if (in_place) {
    if (operands.size() != 4) {
      return InstError(inst,
                       "in-place collective-permute needs 4 operands, "
                       "got ",
                       operands.size());
    }
    const Shape& in = *operands[0];
    const Shape& out = *operands[1];
    const Shape& in_off = *operands[2];
    const Shape& out_off = *operands[3];
    auto check_offset = [&](const Shape& buf,
                            const Shape& off) -> absl::Status {
      if (!off.IsTuple()) {
        return InstError(inst, "Buffer offset is not tuple.");
      }
      bool all_array = true, all_tuple = true;
      for (const Shape& e : off.tuple_shapes()) {
        all_array &= e.IsArray();
        all_tuple &= e.IsTuple();
      }
      if (!all_array && !all_tuple) {
        return InstError(inst,
                         "Buffer offset should either be a tuple of "
                         "arrays or a tuple of tuples.");
      }
      if (all_tuple && off.tuple_shapes_size() > 0) {
        for (const Shape& e : off.tuple_shapes()) {
          if (e.tuple_shapes_size() != buf.rank()) {
            return InstError(inst,
                             "Buffer offset index should have the same "
                             "number of elements as the buffer's rank.");
          }
        }
      } else if (off.tuple_shapes_size() != buf.rank()) {
        return InstError(inst,
                         "Buffer offset index should have the same "
                         "number of elements as the buffer's rank.");
      }
      return absl::OkStatus();
    };
    if (in.IsArray() && out.IsArray()) {
      if (absl::Status s = check_offset(in, in_off); !s.ok()) return s;
      if (absl::Status s = check_offset(out, out_off); !s.ok()) return s;
    } else if (in.IsTuple() && out.IsTuple()) {
      if (in.tuple_shapes_size() != out.tuple_shapes_size()) {
        return InstError(inst, "Unmatching input buffers and output buffers.");
      }
      if (!in_off.IsTuple() ||
          in_off.tuple_shapes_size() != in.tuple_shapes_size()) {
        return InstError(inst, "Unmatching input buffers and input offset.");
      }
      for (int64_t i = 0; i < in.tuple_shapes_size(); ++i) {
        if (absl::Status s =
                check_offset(in.tuple_shapes(i), in_off.tuple_shapes(i));
            !s.ok()) {
          return s;
        }
      }
      if (!out_off.IsTuple() ||
          out_off.tuple_shapes_size() != out.tuple_shapes_size()) {
        return InstError(inst, "Unmatching output buffers and output offset.");
      }
      for (int64_t i = 0; i < out.tuple_shapes_size(); ++i) {
        if (absl::Status s =
                check_offset(out.tuple_shapes(i), out_off.tuple_shapes(i));
            !s.ok()) {
          return s;
        }
      }
    } else {
      return InstError(inst, "Unmatching input buffers and output buffers.");
    }
    allowed = in.IsArray() ? in_off.tuple_shapes_size()
                           : (in_off.tuple_shapes_size() > 0
                                  ? in_off.tuple_shapes(0).tuple_shapes_size()
                                  : 1);
    if (allowed < 1) allowed = 1;
  }
  // Sources and targets: non-negative, within the device count, and each
  // used at most `allowed` times.
  const int64_t limit =
      *mode == GroupMode::kCrossReplica ? replica_count_ : num_partitions_;
  absl::flat_hash_map<int64_t, int64_t> sources, targets;
  auto check_id =
      [&](std::string_view role, int64_t id,
          absl::flat_hash_map<int64_t, int64_t>& uses) -> absl::Status {
    if (id < 0) {
      return InstError(inst, role, " ", id,
                       " in the instruction's source-target pair must be "
                       ">= 0");
    }
    if (limit != 1 && id >= limit) {
      return InstError(inst, role, " ", id,
                       " in the instruction's source-target pair must be < ",
                       limit);
    }
    if (++uses[id] > allowed) {
      if (allowed == 1) {
        return InstError(inst, role, " ", id,
                         " appears more than once in instruction's "
                         "source-target pairs");
      }
      return InstError(inst, role, " ", id, " appears more than ", allowed,
                       " times in instruction's source-target pairs");
    }
    return absl::OkStatus();
  };
  for (const auto& [src, dst] : inst->attrs().source_target_pairs) {
    if (absl::Status s = check_id("Source", src, sources); !s.ok()) return s;
    if (absl::Status s = check_id("Target", dst, targets); !s.ok()) return s;
  }
  auto result = InferCollectivePermuteShape(operands, in_place);
  if (!result.ok()) return Wrap(inst, result.status());
  if (op == Opcode::kCollectivePermute) return CheckShape(inst, *result);
  // collective-permute-start: (inputs, outputs, context...).
  const Shape& s = inst->shape();
  Shape input = operands.size() == 1 || in_place ? *operands[0]
                                                 : *InferTupleShape(operands);
  if (!s.IsTuple() || s.tuple_shapes_size() < 2 ||
      !ShapesSame(s.tuple_shapes(0), input) ||
      !ShapesSame(s.tuple_shapes(1), *result)) {
    return InstError(inst, "expected shape (", ShapeText(input), ", ",
                     ShapeText(*result), ", context...), actual shape is ",
                     ShapeText(s));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Async operations.

const Computation* Verifier::WrappedComputation(const Instruction* inst) const {
  if (!inst->called_computations().empty()) {
    return inst->called_computations()[0];
  }
  const Instruction* cur = inst;
  for (int steps = 0; steps < 1000 && cur != nullptr; ++steps) {
    if (!cur->called_computations().empty() && IsAsyncOp(cur->opcode())) {
      return cur->called_computations()[0];
    }
    if (cur->operand_count() == 0) return nullptr;
    const Instruction* next = TraceAsyncSource(cur->operand(0), {}, 0);
    if (next == nullptr || next == cur) return nullptr;
    cur = next;
  }
  return nullptr;
}

namespace {

// Structural equality of two computations: same instructions (opcode,
// shape, parameter number, operands, called computations) from the root.
bool EquivalentInstructions(
    const Instruction* a, const Instruction* b,
    absl::flat_hash_map<const Instruction*, const Instruction*>* seen,
    int depth);

bool EquivalentComputationsImpl(const Computation* a, const Computation* b,
                                int depth) {
  if (a == b) return true;
  if (depth > 16 || a->num_parameters() != b->num_parameters() ||
      a->instruction_count() != b->instruction_count() ||
      a->root_instruction() == nullptr || b->root_instruction() == nullptr) {
    return false;
  }
  absl::flat_hash_map<const Instruction*, const Instruction*> seen;
  return EquivalentInstructions(a->root_instruction(), b->root_instruction(),
                                &seen, depth);
}

bool EquivalentInstructions(
    const Instruction* a, const Instruction* b,
    absl::flat_hash_map<const Instruction*, const Instruction*>* seen,
    int depth) {
  if (auto it = seen->find(a); it != seen->end()) return it->second == b;
  (*seen)[a] = b;
  if (a->opcode() != b->opcode() || !a->shape().Compatible(b->shape()) ||
      a->operand_count() != b->operand_count() ||
      a->called_computations().size() != b->called_computations().size()) {
    return false;
  }
  if (a->opcode() == Opcode::kParameter &&
      a->parameter_number() != b->parameter_number()) {
    return false;
  }
  if (a->dimensions() != b->dimensions() || a->int_attr() != b->int_attr()) {
    return false;
  }
  for (int64_t i = 0; i < a->operand_count(); ++i) {
    if (!EquivalentInstructions(a->operand(i), b->operand(i), seen, depth)) {
      return false;
    }
  }
  for (size_t i = 0; i < a->called_computations().size(); ++i) {
    if (!EquivalentComputationsImpl(a->called_computations()[i],
                                    b->called_computations()[i], depth + 1)) {
      return false;
    }
  }
  return true;
}

bool EquivalentComputations(const Computation* a, const Computation* b) {
  return EquivalentComputationsImpl(a, b, 0);
}

}  // namespace

// Finds the async-start/update that produced `value` (at tuple `index`),
// looking through get-tuple-element, tuple, while loops and their bodies'
// parameters. Returns nullptr when the value has another origin.
const Instruction* Verifier::TraceAsyncSource(const Instruction* value,
                                              std::vector<int64_t> index,
                                              int depth) const {
  if (depth > 64 || value == nullptr) return nullptr;
  switch (value->opcode()) {
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
      return index.empty() ? value : nullptr;
    case Opcode::kGetTupleElement: {
      index.insert(index.begin(), value->tuple_index());
      return TraceAsyncSource(value->operand(0), std::move(index), depth + 1);
    }
    case Opcode::kTuple: {
      if (index.empty() || index[0] < 0 || index[0] >= value->operand_count()) {
        return nullptr;
      }
      const Instruction* op = value->operand(index[0]);
      index.erase(index.begin());
      return TraceAsyncSource(op, std::move(index), depth + 1);
    }
    case Opcode::kWhile:
    case Opcode::kOptimizationBarrier:
    case Opcode::kCopy:
      return TraceAsyncSource(value->operand(0), std::move(index), depth + 1);
    case Opcode::kCustomCall:
      // Annotations such as Sharding pass the value through.
      if (value->operand_count() == 1 &&
          value->operand(0)->shape().Compatible(value->shape())) {
        return TraceAsyncSource(value->operand(0), std::move(index), depth + 1);
      }
      return nullptr;
    case Opcode::kParameter: {
      auto it = callers_.find(value->parent());
      if (it == callers_.end()) return nullptr;
      for (const Instruction* caller : it->second) {
        if (caller->opcode() == Opcode::kWhile &&
            caller->operand_count() == 1) {
          return TraceAsyncSource(caller->operand(0), std::move(index),
                                  depth + 1);
        }
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

absl::Status Verifier::HandleAsync(const Instruction* inst) {
  const Opcode op = inst->opcode();
  const std::string_view name = OpcodeName(op);
  const Computation* wrapped = WrappedComputation(inst);
  // The operand of update/done must come from an async-start/update, possibly
  // through a loop; its wrapped computation must be the same.
  if (op != Opcode::kAsyncStart) {
    const Instruction* operand = inst->operand(0);
    const Instruction* source = TraceAsyncSource(operand, {}, 0);
    if (source == nullptr) {
      return InstError(inst, "The operand of a ", name,
                       " instruction needs to be async-start or "
                       "async-update, found ",
                       OpcodeName(operand->opcode()));
    }
    const Computation* source_wrapped = WrappedComputation(source);
    if (wrapped != nullptr && source_wrapped != nullptr &&
        wrapped != source_wrapped &&
        !EquivalentComputations(wrapped, source_wrapped)) {
      return InstError(inst, "The ", name,
                       " expects its wrapped async computation '",
                       wrapped->name(), "' to be identical to its operand's '",
                       source_wrapped->name(), "'");
    }
    if (wrapped == nullptr) wrapped = source_wrapped;
  }
  if (wrapped == nullptr) {
    return InstError(inst, name, " has no wrapped computation");
  }
  // An update or done that names a thread must use the start's.
  if (op != Opcode::kAsyncStart &&
      !inst->attrs().async_execution_thread.empty() &&
      ThreadName(inst->attrs().async_execution_thread) != Thread(wrapped)) {
    return InstError(inst, name, " expects async thread name ", Thread(wrapped),
                     " of its async-start, got ",
                     inst->attrs().async_execution_thread);
  }
  if (absl::Status s = CheckNestedThreads(inst, wrapped, false, 0); !s.ok()) {
    return s;
  }
  // For parser-built "op-start" wrappers, the program is that of the
  // wrapped call or fusion when there is one; otherwise the wrapper's
  // parameters are just the start's operands, and its root's shape is only
  // meaningful once results are bound.
  ProgramShape program = ComputeProgramShape(*wrapped);
  bool check_params = true;
  bool check_result = true;
  if (wrapped->IsAsyncWrapper()) {
    const Instruction* root = wrapped->root_instruction();
    if ((root->opcode() == Opcode::kCall ||
         root->opcode() == Opcode::kFusion) &&
        !root->called_computations().empty()) {
      program = ComputeProgramShape(*root->called_computations()[0]);
    } else {
      check_result = !PartialWrapperRoot(root);
    }
    // The wrapper's parameters are only the start's operands; updates may
    // add more.
    check_params = false;
  }
  auto is_prefix = [&](const Shape& part, const std::vector<Shape>& full) {
    if (!part.IsTuple() ||
        part.tuple_shapes_size() > static_cast<int64_t>(full.size())) {
      return false;
    }
    for (int64_t i = 0; i < part.tuple_shapes_size(); ++i) {
      if (!ShapesSame(part.tuple_shapes(i), full[i])) return false;
    }
    return true;
  };
  // Operands may arrive over several async ops (start, then updates with
  // extra operands), so start/update carry a prefix of the parameters; the
  // results and context elements are only fixed at async-done, where the
  // results are complete or not yet bound ("()").
  auto check_async_shape = [&](const Shape& s, bool complete) -> absl::Status {
    if (!s.IsTuple() || s.tuple_shapes_size() < 2) {
      return InstError(inst, "The ", name,
                       " expects the async shape to be a tuple of at least "
                       "two elements, found ",
                       ShapeText(s));
    }
    const Shape& params = s.tuple_shapes(0);
    // A wrapper the parser built for "op-start" shorthand has one parameter
    // per operand of the start only, so later operands cannot be matched.
    const bool params_ok =
        !check_params
            ? params.IsTuple()
            : is_prefix(params, program.parameters) &&
                  (!complete ||
                   params.tuple_shapes_size() ==
                       static_cast<int64_t>(program.parameters.size()));
    if (!params_ok) {
      return InstError(inst, "The ", name,
                       " expects the async shape at index {0} to match async "
                       "computation parameter shape (",
                       ShapeText(params), " vs ",
                       ShapeText(Shape::Tuple(program.parameters)), ")");
    }
    const Shape& results = s.tuple_shapes(1);
    const bool unbound = results.IsTuple() && results.tuple_shapes_size() == 0;
    if (complete && check_result && !unbound &&
        !ShapesSame(results, program.result)) {
      return InstError(inst, "The ", name,
                       " expects the async shape at index {1} to match the "
                       "async computation root shape (",
                       ShapeText(results), " vs ", ShapeText(program.result),
                       ")");
    }
    return absl::OkStatus();
  };
  switch (op) {
    case Opcode::kAsyncStart: {
      if (absl::Status s = check_async_shape(inst->shape(), false); !s.ok()) {
        return s;
      }
      const Shape& params = inst->shape().tuple_shapes(0);
      if (params.tuple_shapes_size() != inst->operand_count()) {
        return InstError(inst, "The ", name, " has ", inst->operand_count(),
                         " operands but its async shape at index {0} has ",
                         params.tuple_shapes_size(), " elements");
      }
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        if (!ShapesSame(params.tuple_shapes(i), inst->operand(i)->shape())) {
          return InstError(inst, "The ", name, " expects the shape of operand ",
                           i, " to match the async shape at index {0} (",
                           ShapeText(inst->operand(i)->shape()), " vs ",
                           ShapeText(params.tuple_shapes(i)), ")");
        }
      }
      break;
    }
    case Opcode::kAsyncUpdate: {
      const Shape& prev = inst->operand(0)->shape();
      {
        // The operand tuple at index {0} is carried over, extended by any
        // extra operands.
        const Shape& s = inst->shape();
        if (!prev.IsTuple() || prev.tuple_shapes_size() < 2 || !s.IsTuple() ||
            s.tuple_shapes_size() < 2 || !s.tuple_shapes(0).IsTuple() ||
            !prev.tuple_shapes(0).IsTuple()) {
          return InstError(inst, "The ", name,
                           " expects async tuple shapes, got ", ShapeText(prev),
                           " and ", ShapeText(s));
        }
        const Shape& before = prev.tuple_shapes(0);
        const Shape& after = s.tuple_shapes(0);
        const int64_t extra = inst->operand_count() - 1;
        bool ok =
            after.tuple_shapes_size() == before.tuple_shapes_size() + extra;
        for (int64_t i = 0; ok && i < before.tuple_shapes_size(); ++i) {
          ok = ShapesSame(after.tuple_shapes(i), before.tuple_shapes(i));
        }
        for (int64_t i = 0; ok && i < extra; ++i) {
          ok = ShapesSame(after.tuple_shapes(before.tuple_shapes_size() + i),
                          inst->operand(1 + i)->shape());
        }
        if (!ok) {
          return InstError(inst, "The ", name,
                           " expects the async shape at index {0} to be its "
                           "operand's plus any extra operands: ",
                           ShapeText(before), " vs ", ShapeText(after));
        }
      }
      if (absl::Status s = check_async_shape(inst->shape(), false); !s.ok()) {
        return s;
      }
      break;
    }
    default: {
      const Shape& prev = inst->operand(0)->shape();
      if (absl::Status s = check_async_shape(prev, true); !s.ok()) return s;
      const Shape& results = prev.tuple_shapes(1);
      const bool unbound =
          results.IsTuple() && results.tuple_shapes_size() == 0;
      if (check_result && !unbound &&
          !ShapesSame(program.result, inst->shape())) {
        return InstError(inst, "The ", name,
                         " expects the shape of output to match the async "
                         "shape at index {1} (",
                         ShapeText(inst->shape()), " vs ",
                         ShapeText(program.result), ")");
      }
      break;
    }
  }
  return HandleAliasing(inst, inst->attrs().output_to_operand_aliasing, true);
}

// ---------------------------------------------------------------------------
// Send/recv, rng.

absl::Status Verifier::HandleSendRecv(const Instruction* inst) {
  // XLA's default verifier checks the (data, u32[], token[]) tuples of
  // send/recv, but many modules built by tests and passes use variants
  // (pipelined send-done returning data, reordered contexts), so only the
  // token operand of recv is checked.
  if (inst->opcode() == Opcode::kRecv && !inst->operand(0)->shape().IsToken()) {
    return InstError(inst,
                     "Expected operand 0 to be token-shaped, actual "
                     "shape is ",
                     ShapeText(inst->operand(0)->shape()));
  }
  return absl::OkStatus();
}

absl::Status Verifier::HandleRng(const Instruction* inst) {
  const Shape& a = inst->operand(0)->shape();
  const Shape& b = inst->operand(1)->shape();
  if (!a.IsScalar() || !b.IsScalar()) {
    return InstError(inst,
                     "Expected scalar types for the two operands of Rng "
                     "instruction, got ",
                     ShapeText(a), " and ", ShapeText(b));
  }
  const Shape& r = inst->shape();
  const bool types_ok = a.element_type() == b.element_type() && r.IsArray() &&
                        (a.element_type() == r.element_type() ||
                         (opts_.allow_mixed_precision &&
                          SameElementTypeIgnoringFpPrecision(a, r)));
  if (!types_ok) {
    return InstError(inst,
                     "Expected compatible element types for the result "
                     "and the two operands of Rng instruction, got ",
                     ShapeText(a), ", ", ShapeText(b), " -> ", ShapeText(r));
  }
  const PrimitiveType t = a.element_type();
  if (inst->attrs().distribution == RandomDistribution::kUniform) {
    if (!IsFloatingPointType(t) && !IsIntegralType(t) &&
        t != PrimitiveType::kPred) {
      return InstError(inst, "Element type not supported for rng_uniform: ",
                       PrimitiveTypeName(t));
    }
  } else if (!IsFloatingPointType(t)) {
    return InstError(inst, "Element type not supported for rng_normal: ",
                     PrimitiveTypeName(t), " (expected floating point)");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// The per-opcode dispatch.

// In layout-sensitive mode, operations that only move or combine elements
// must not change the layout of same-rank operands (XLA's layout assignment
// never lets them; a layout change needs a copy or a transpose).
absl::Status Verifier::VerifyNoLayoutChange(const Instruction* inst) const {
  const Opcode op = inst->opcode();
  const bool keeps_layout =
      IsUnaryElementwise(op) || IsBinaryElementwise(op) ||
      IsTernaryElementwise(op) || op == Opcode::kConvert ||
      op == Opcode::kBitcastConvert || op == Opcode::kReducePrecision ||
      op == Opcode::kConcatenate || op == Opcode::kDynamicSlice ||
      op == Opcode::kDynamicUpdateSlice || op == Opcode::kPad ||
      op == Opcode::kReverse || op == Opcode::kSlice || op == Opcode::kMap ||
      op == Opcode::kSort;
  const Shape& out = inst->shape();
  if (!keeps_layout || !out.IsArray() || !out.has_layout()) {
    return absl::OkStatus();
  }
  for (const Instruction* operand : inst->operands()) {
    const Shape& in = operand->shape();
    if (!in.IsArray() || !in.has_layout() || in.rank() != out.rank()) continue;
    if (in.layout().minor_to_major != out.layout().minor_to_major) {
      return InstError(inst, OpcodeName(op),
                       " must not change the layout: operand '",
                       operand->name(), "' is ", in.ToString(), ", result is ",
                       out.ToString());
    }
  }
  return absl::OkStatus();
}

// Without mixed precision, reduce and map operands must have exactly the
// element types of the to_apply parameters they feed.
absl::Status Verifier::CheckToApplyParameterTypes(
    const Instruction* inst, std::span<const Shape* const> operands,
    const ProgramShape& to_apply) const {
  if (opts_.allow_mixed_precision) return absl::OkStatus();
  for (size_t i = 0; i < operands.size() && i < to_apply.parameters.size();
       ++i) {
    if (to_apply.parameters[i].element_type() != operands[i]->element_type()) {
      return InstError(inst,
                       "Shape mismatch between to_apply computation parameter "
                       "and operand ",
                       i);
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifyInstruction(const Instruction* inst) {
  if (absl::Status s = VerifyShapeWellFormed(inst, inst->shape()); !s.ok()) {
    return s;
  }
  if (!opts_.allow_unbounded_dynamism && inst->shape().is_unbounded_dynamic()) {
    return InstError(inst, "unbounded dynamism is disabled for instruction: ",
                     inst->shape().ToString());
  }
  if (PartialWrapperRoot(inst)) return absl::OkStatus();
  if (absl::Status s = VerifyOperandCount(inst); !s.ok()) return s;
  if (absl::Status s = VerifyCalledCount(inst); !s.ok()) return s;
  if (absl::Status s = VerifyGenericAttributes(inst); !s.ok()) return s;
  if (opts_.layout_sensitive) {
    if (absl::Status s = VerifyNoLayoutChange(inst); !s.ok()) return s;
  }
  const Opcode op = inst->opcode();
  const InstructionAttrs& a = inst->attrs();
  std::vector<const Shape*> operands;
  operands.reserve(inst->operand_count());
  for (const Instruction* o : inst->operands()) operands.push_back(&o->shape());
  auto shapes_from = [&](int64_t begin) {
    return std::span<const Shape* const>(operands).subspan(begin);
  };
  if (IsUnaryElementwise(op) || IsBinaryElementwise(op) ||
      IsTernaryElementwise(op)) {
    return HandleElementwise(inst);
  }
  switch (op) {
    case Opcode::kParameter:
      return absl::OkStatus();
    case Opcode::kConstant: {
      if (!inst->has_literal()) {
        return InstError(inst, "constant has no literal");
      }
      if (!inst->literal().shape().Compatible(inst->shape())) {
        return InstError(
            inst, "constant literal shape ", ShapeText(inst->literal().shape()),
            " does not match the instruction shape ", ShapeText(inst->shape()));
      }
      return absl::OkStatus();
    }
    case Opcode::kIota: {
      const Shape& s = inst->shape();
      if (!s.IsArray()) {
        return InstError(inst, "Iota does not support non-array result ",
                         ShapeText(s));
      }
      if (s.rank() == 0)
        return InstError(inst, "Iota does not support scalars");
      const int64_t d = inst->iota_dimension();
      if (d < 0 || d >= s.rank()) {
        return InstError(inst, "iota dimension ", d,
                         " cannot go beyond the rank or be negative");
      }
      const PrimitiveType t = s.element_type();
      if (!IsIntegralType(t) && !IsFloatingPointType(t) && !IsComplexType(t)) {
        return InstError(
            inst,
            "Only support iota of integral, floating point "
            "or complex primitive types, got ",
            PrimitiveTypeName(t) == "pred" ? "PRED" : PrimitiveTypeName(t));
      }
      return absl::OkStatus();
    }
    case Opcode::kCopy:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return CheckShape(inst, InferUnaryOpShape(op, *operands[0]));
    case Opcode::kConvert:
      return CheckShape(
          inst, InferConvertShape(*operands[0], inst->shape().element_type()));
    case Opcode::kBitcastConvert:
      return CheckShape(inst, InferBitcastConvertShape(
                                  *operands[0], inst->shape().element_type()));
    case Opcode::kStochasticConvert:
      return CheckShape(
          inst, InferStochasticConvertShape(*operands[0], *operands[1],
                                            inst->shape().element_type()));
    case Opcode::kReducePrecision:
      return CheckShape(inst,
                        InferReducePrecisionShape(*operands[0], a.exponent_bits,
                                                  a.mantissa_bits));
    case Opcode::kBitcast: {
      const Shape& in = *operands[0];
      const Shape& out = inst->shape();
      if (opts_.layout_sensitive && in.IsArray() && out.IsArray() &&
          !in.is_dynamic() && !out.is_dynamic()) {
        const int64_t in_bytes = in.ElementsIn() * ByteWidth(in.element_type());
        const int64_t out_bytes =
            out.ElementsIn() * ByteWidth(out.element_type());
        if (in_bytes != out_bytes) {
          return InstError(inst,
                           "Bitcast cannot have different shape sizes "
                           "of output (",
                           out_bytes, ") and operand (", in_bytes, ")");
        }
      }
      return absl::OkStatus();
    }
    case Opcode::kBroadcast: {
      Shape operand = *operands[0];
      if (opts_.allow_mixed_precision && operand.IsArray() &&
          inst->shape().IsArray() &&
          SameElementTypeIgnoringFpPrecision(operand, inst->shape())) {
        operand.set_element_type(inst->shape().element_type());
      }
      auto r = InferBroadcastShape(operand, inst->shape(), inst->dimensions());
      return r.ok() ? absl::OkStatus() : Wrap(inst, r.status());
    }
    case Opcode::kReshape: {
      auto r = InferReshapeShape(*operands[0], inst->shape());
      return r.ok() ? absl::OkStatus() : Wrap(inst, r.status());
    }
    case Opcode::kDynamicReshape: {
      auto r = InferReshapeShape(*operands[0], inst->shape());
      if (!r.ok()) return Wrap(inst, r.status());
      if (inst->shape().rank() + 1 != inst->operand_count()) {
        return InstError(inst,
                         "dynamic-reshape needs one size operand per "
                         "result dimension");
      }
      for (int64_t i = 1; i < inst->operand_count(); ++i) {
        if (operands[i]->element_type() != PrimitiveType::kS32) {
          return InstError(inst,
                           "dynamic-reshape size operands must be s32, "
                           "got ",
                           ShapeText(*operands[i]));
        }
      }
      return absl::OkStatus();
    }
    case Opcode::kTranspose:
      return CheckShape(inst,
                        InferTransposeShape(*operands[0], inst->dimensions()));
    case Opcode::kReverse:
      return CheckShape(inst,
                        InferReverseShape(*operands[0], inst->dimensions()));
    case Opcode::kSlice:
      return CheckShape(inst, InferSliceShape(*operands[0], a.slice));
    case Opcode::kDynamicSlice:
      return CheckShape(inst,
                        InferDynamicSliceShape(*operands[0], shapes_from(1),
                                               a.dynamic_slice_sizes));
    case Opcode::kDynamicUpdateSlice:
      if (inst->operand_count() < 2) {
        return InstError(inst,
                         "dynamic-update-slice needs an operand and an "
                         "update");
      }
      return CheckShape(inst, InferDynamicUpdateSliceShape(
                                  *operands[0], *operands[1], shapes_from(2)));
    case Opcode::kConcatenate:
      if (inst->dimensions().size() != 1) {
        return InstError(inst, "concatenate needs exactly one dimension, got ",
                         IntList(inst->dimensions()));
      }
      return CheckShape(inst,
                        InferConcatenateShape(operands, inst->dimensions(0)));
    case Opcode::kPad:
      return CheckShape(inst,
                        InferPadShape(*operands[0], *operands[1], a.padding));
    case Opcode::kGather: {
      if (!a.gather_dnums.has_value()) {
        return InstError(inst, "gather needs dimension numbers");
      }
      return CheckShape(
          inst, InferGatherShape(*operands[0], *operands[1], *a.gather_dnums,
                                 a.gather_slice_sizes));
    }
    case Opcode::kScatter: {
      if (!a.scatter_dnums.has_value()) {
        return InstError(inst, "scatter needs dimension numbers");
      }
      return CheckShape(
          inst,
          InferScatterShape(operands, ComputeProgramShape(*inst->to_apply()),
                            *a.scatter_dnums));
    }
    case Opcode::kTuple:
      return CheckShape(inst, InferTupleShape(operands));
    case Opcode::kGetTupleElement:
      return CheckShape(
          inst, InferGetTupleElementShape(*operands[0], inst->tuple_index()));
    case Opcode::kReduce: {
      const ProgramShape p = ComputeProgramShape(*inst->to_apply());
      if (absl::Status s = CheckShape(
              inst, InferReduceShape(operands, inst->dimensions(), p));
          !s.ok()) {
        return s;
      }
      return CheckToApplyParameterTypes(inst, operands, p);
    }
    case Opcode::kReduceWindow:
      return CheckShape(
          inst, InferReduceWindowShape(operands, a.window.value_or(Window()),
                                       ComputeProgramShape(*inst->to_apply())));
    case Opcode::kSelectAndScatter:
      return CheckShape(
          inst, InferSelectAndScatterShape(
                    *operands[0],
                    ComputeProgramShape(*inst->called_computations()[0]),
                    a.window.value_or(Window()), *operands[1], *operands[2],
                    ComputeProgramShape(*inst->called_computations()[1])));
    case Opcode::kMap: {
      const ProgramShape p = ComputeProgramShape(*inst->to_apply());
      if (absl::Status s = CheckShape(inst, InferMapShape(operands, p));
          !s.ok()) {
        return s;
      }
      return CheckToApplyParameterTypes(inst, operands, p);
    }
    case Opcode::kSort: {
      if (inst->dimensions().size() != 1) {
        return InstError(inst, "sort needs exactly one dimension, got ",
                         IntList(inst->dimensions()));
      }
      return CheckShape(inst,
                        InferSortShape(operands, inst->dimensions(0),
                                       ComputeProgramShape(*inst->to_apply())));
    }
    case Opcode::kTopK:
      return CheckShape(inst, InferTopKShape(*operands[0], a.k));
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kConvolution:
      return HandleDot(inst);
    case Opcode::kFft:
      return CheckShape(inst,
                        InferFftShape(*operands[0], a.fft_type, a.fft_length));
    case Opcode::kTriangularSolve:
      return CheckShape(inst, InferTriangularSolveShape(
                                  *operands[0], *operands[1], a.left_side));
    case Opcode::kCholesky:
      return CheckShape(inst, InferCholeskyShape(*operands[0]));
    case Opcode::kBatchNormTraining:
      return CheckShape(
          inst, InferBatchNormTrainingShape(*operands[0], *operands[1],
                                            *operands[2], a.feature_index));
    case Opcode::kBatchNormInference:
      return CheckShape(inst, InferBatchNormInferenceShape(
                                  *operands[0], *operands[1], *operands[2],
                                  *operands[3], *operands[4], a.feature_index));
    case Opcode::kBatchNormGrad:
      return CheckShape(inst, InferBatchNormGradShape(
                                  *operands[0], *operands[1], *operands[2],
                                  *operands[3], *operands[4], a.feature_index));
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize: {
      if (inst->dimensions().size() != 1) {
        return InstError(inst, OpcodeName(op),
                         " needs exactly one dimension, got ",
                         IntList(inst->dimensions()));
      }
      if (op == Opcode::kGetDimensionSize) {
        auto r = InferGetDimensionSizeShape(*operands[0], inst->dimensions(0));
        if (!r.ok()) return Wrap(inst, r.status());
        // XLA produces s32[]; some modules use another integer type.
        if (!inst->shape().IsScalar() ||
            !IsIntegralType(inst->shape().element_type())) {
          return InstError(inst,
                           "get-dimension-size must produce an integer "
                           "scalar, got ",
                           ShapeText(inst->shape()));
        }
        return absl::OkStatus();
      }
      return CheckShape(inst,
                        InferSetDimensionSizeShape(*operands[0], *operands[1],
                                                   inst->dimensions(0)));
    }
    case Opcode::kCall:
      return HandleCall(inst);
    case Opcode::kWhile:
      return HandleWhile(inst);
    case Opcode::kConditional:
      return HandleConditional(inst);
    case Opcode::kFusion:
      return HandleFusion(inst);
    case Opcode::kCustomCall:
      return HandleCustomCall(inst);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
      return HandleCollective(inst);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return HandleAsync(inst);
    case Opcode::kCopyStart:
      return CheckShape(inst,
                        Shape::Tuple({*operands[0], *operands[0],
                                      Shape::Scalar(PrimitiveType::kU32)}));
    case Opcode::kCopyDone: {
      const Shape& s = *operands[0];
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) {
        return InstError(inst,
                         "copy-done needs a copy-start tuple operand, "
                         "got ",
                         ShapeText(s));
      }
      if (!ShapesSame(s.tuple_shapes(0), s.tuple_shapes(1))) {
        return InstError(inst,
                         "Source and destination buffers in CopyDone "
                         "arguments need to be the same shape, found ",
                         ShapeText(s.tuple_shapes(0)), " and ",
                         ShapeText(s.tuple_shapes(1)));
      }
      return CheckShape(inst, s.tuple_shapes(0));
    }
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return HandleSendRecv(inst);
    case Opcode::kInfeed: {
      if (!operands[0]->IsToken()) {
        return InstError(inst,
                         "Expected operand 0 to be token-shaped, actual "
                         "shape is ",
                         ShapeText(*operands[0]));
      }
      const Shape& s = inst->shape();
      if (!s.IsTuple() || s.tuple_shapes_size() != 2 ||
          !s.tuple_shapes(1).IsToken()) {
        return InstError(inst,
                         "infeed must produce a (data, token[]) tuple, "
                         "got ",
                         ShapeText(s));
      }
      return absl::OkStatus();
    }
    case Opcode::kOutfeed: {
      if (!operands[1]->IsToken()) {
        return InstError(inst,
                         "Expected operand 1 to be token-shaped, actual "
                         "shape is ",
                         ShapeText(*operands[1]));
      }
      if (a.outfeed_shape.has_value() &&
          !ShapesSame(*a.outfeed_shape, *operands[0])) {
        return InstError(inst,
                         "Expected outfeed shape to be equal to "
                         "operand's shape ",
                         ShapeText(*operands[0]), ", actual shape is ",
                         ShapeText(*a.outfeed_shape));
      }
      return absl::OkStatus();
    }
    case Opcode::kAfterAll:
      return CheckShape(inst, Shape::Token());
    case Opcode::kAddDependency:
      if (!operands[1]->IsToken()) {
        return InstError(inst,
                         "Expected operand 1 to be token-shaped, actual "
                         "shape is ",
                         ShapeText(*operands[1]));
      }
      return CheckShape(inst, *operands[0]);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return CheckShape(inst, Shape::Scalar(PrimitiveType::kU32));
    case Opcode::kRng:
      return HandleRng(inst);
    case Opcode::kRngGetAndUpdateState:
      if (!inst->shape().Compatible(Shape(PrimitiveType::kU64, {2}))) {
        return InstError(inst,
                         "rng-get-and-update-state must produce u64[2], "
                         "got ",
                         ShapeText(inst->shape()));
      }
      return absl::OkStatus();
    case Opcode::kRngBitGenerator: {
      const Shape& s = inst->shape();
      if (!s.IsTuple()) return absl::OkStatus();
      if (s.tuple_shapes_size() != 2) {
        return InstError(inst,
                         "Expected tuple shape with 2 elements for "
                         "RngBitGenerator, got ",
                         ShapeText(s));
      }
      if (!operands[0]->Compatible(s.tuple_shapes(0))) {
        return InstError(inst,
                         "Expected state shape to match between input "
                         "and output for RngBitGenerator, got ",
                         ShapeText(*operands[0]), " vs ",
                         ShapeText(s.tuple_shapes(0)));
      }
      return absl::OkStatus();
    }
    case Opcode::kScan: {
      if (inst->dimensions().size() != 1) {
        return InstError(inst, "scan needs exactly one dimension, got ",
                         IntList(inst->dimensions()));
      }
      const int64_t carries = a.num_carries;
      if (carries < 0 || carries > inst->operand_count()) {
        return InstError(inst, "scan num_carries ", carries,
                         " is out of range for ", inst->operand_count(),
                         " operands");
      }
      const int64_t dim = inst->dimensions(0);
      for (int64_t i = 0; i < inst->operand_count() - carries; ++i) {
        if (!operands[i]->IsArray() || dim < 0 || dim >= operands[i]->rank()) {
          return InstError(inst, "scan dimension ", dim,
                           " is out of range for input ",
                           ShapeText(*operands[i]));
        }
      }
      const Computation* body = inst->to_apply();
      if (body->num_parameters() != inst->operand_count()) {
        return InstError(inst, "scan computation '", body->name(),
                         "' must take ", inst->operand_count(),
                         " parameters, takes ", body->num_parameters());
      }
      return absl::OkStatus();
    }
    case Opcode::kAlternatives:
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        if (!operands[i]->Compatible(inst->shape())) {
          return InstError(inst, "alternatives operand ", i, " has shape ",
                           ShapeText(*operands[i]),
                           " but the result has shape ",
                           ShapeText(inst->shape()));
        }
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

// ---------------------------------------------------------------------------
// Module-wide checks.

absl::Status Verifier::VerifyAsyncPairs() {
  const Computation* entry = module_.entry_computation();
  absl::Status status = absl::OkStatus();
  // A start (or update) feeds exactly one matching done/update. Loops may
  // carry the async value: a non-entry ROOT may leave it unused, and tuples
  // or while loops may pass it on.
  auto check_users = [&](const Instruction* inst,
                         std::initializer_list<Opcode> dones) -> absl::Status {
    int64_t done_users = 0;
    for (const Instruction* u : inst->users()) {
      if (std::find(dones.begin(), dones.end(), u->opcode()) != dones.end()) {
        ++done_users;
      }
    }
    const int64_t users = inst->user_count();
    // An async op whose results are not bound yet ("()") may be left
    // pending, as may one carried out of a loop body.
    const Shape& s = inst->shape();
    const bool unbound = IsAsyncOp(inst->opcode()) && s.IsTuple() &&
                         s.tuple_shapes_size() >= 2 &&
                         s.tuple_shapes(1).IsTuple() &&
                         s.tuple_shapes(1).tuple_shapes_size() == 0;
    const bool flows_out =
        (inst->IsRoot() && inst->parent() != entry) || unbound;
    if (done_users > 1 || (users == 0 && !flows_out) ||
        (users > 1 && done_users == users)) {
      return InstError(inst, "The ", OpcodeName(inst->opcode()),
                       " instruction requires one consumer, found ", users);
    }
    return absl::OkStatus();
  };
  auto check_operand = [&](const Instruction* inst,
                           Opcode expected) -> absl::Status {
    const Instruction* op = inst->operand(0);
    if (op->opcode() == expected) return absl::OkStatus();
    return InstError(inst, "The operand of a ", OpcodeName(inst->opcode()),
                     " instruction needs to be ", OpcodeName(expected),
                     ", found ", OpcodeName(op->opcode()));
  };
  for (const auto& c : module_.computations()) {
    c->ForEachInstruction([&](const Instruction* inst) {
      if (!status.ok()) return;
      // (start, done) pairs of the dedicated async opcodes.
      static constexpr std::pair<Opcode, Opcode> kPairs[] = {
          {Opcode::kAllReduceStart, Opcode::kAllReduceDone},
          {Opcode::kAllGatherStart, Opcode::kAllGatherDone},
          {Opcode::kCopyStart, Opcode::kCopyDone},
          {Opcode::kCollectivePermuteStart, Opcode::kCollectivePermuteDone}};
      const Opcode op = inst->opcode();
      if (op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate) {
        status = check_users(inst, {Opcode::kAsyncUpdate, Opcode::kAsyncDone});
        return;
      }
      for (const auto& [start, done] : kPairs) {
        if (op == start) status = check_users(inst, {done});
        if (op == done) status = check_operand(inst, start);
      }
    });
    if (!status.ok()) return status;
  }
  // Async computations hold only parameters and the wrapped root, unless
  // the async op groups several collectives.
  for (const auto& c : module_.computations()) {
    auto it = callers_.find(c.get());
    if (it == callers_.end() || it->second.empty()) continue;
    bool all_async = true;
    bool grouped = false;
    for (const Instruction* caller : it->second) {
      all_async &= IsAsyncOp(caller->opcode());
      grouped |= FindFrontendAttr(caller, "_collectives_group") != nullptr;
    }
    // Asynchronous computations on other threads (e.g. sparse cores) run
    // whole programs.
    if (!all_async || grouped || Thread(c.get()) != kMainThread) continue;
    // Parameters, the root, and element accesses of parameters.
    bool trivial = true;
    c->ForEachInstruction([&](const Instruction* inst) {
      if (inst == c->root_instruction() ||
          inst->opcode() == Opcode::kParameter) {
        return;
      }
      if (inst->opcode() == Opcode::kGetTupleElement &&
          inst->operand(0)->opcode() == Opcode::kParameter) {
        return;
      }
      trivial = false;
    });
    if (!trivial) {
      return CompError(c.get(),
                       "Asynchronous computation expected to "
                       "contain only the root and parameter "
                       "instructions");
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::VerifyChannels() {
  // Host transfers sharing a channel must agree on data shape and
  // rendezvous.
  std::map<std::pair<int64_t, Opcode>, const Instruction*> host_first;
  for (const auto& c : module_.computations()) {
    for (const Instruction* inst : c->instructions()) {
      const Opcode op = inst->opcode();
      if ((op != Opcode::kSend && op != Opcode::kRecv) ||
          !inst->attrs().is_host_transfer) {
        continue;
      }
      const int64_t channel = inst->attrs().channel_id.value_or(-1);
      auto [it, inserted] = host_first.emplace(std::pair(channel, op), inst);
      if (inserted) continue;
      const Instruction* first = it->second;
      const Shape& s1 =
          op == Opcode::kSend ? first->operand(0)->shape() : first->shape();
      const Shape& s2 =
          op == Opcode::kSend ? inst->operand(0)->shape() : inst->shape();
      if (!s1.Compatible(s2)) {
        return InstError(inst, "host transfer on channel ", channel,
                         " uses shape ", ShapeText(s2), " but '", first->name(),
                         "' uses ", ShapeText(s1));
      }
      auto rendezvous = [](const Instruction* i) -> std::string {
        const FrontendAttribute* f =
            FindFrontendAttr(i, "_xla_host_transfer_rendezvous");
        return f ? f->value : std::string();
      };
      if (rendezvous(first) != rendezvous(inst)) {
        return InstError(inst, "host transfer on channel ", channel,
                         " uses a different rendezvous than '", first->name(),
                         "'");
      }
    }
  }
  if (!module_.config().is_scheduled.value_or(false)) return absl::OkStatus();
  // In scheduled modules, point-to-point send/recv annotated with
  // _xla_send_recv_source_target_pairs come in matching pairs (same channel
  // and pairs), name each device at most once as source and as target, and
  // a cyclic pattern must post its recv before the send completes, or every
  // device blocks in send-done.
  struct P2P {
    std::vector<const Instruction*> sends, recvs;
  };
  std::map<std::pair<int64_t, std::string>, P2P> p2p;
  for (const auto& c : module_.computations()) {
    for (const Instruction* inst : c->instructions()) {
      const Opcode op = inst->opcode();
      if ((op != Opcode::kSend && op != Opcode::kRecv) ||
          inst->attrs().is_host_transfer) {
        continue;
      }
      const FrontendAttribute* f =
          FindFrontendAttr(inst, "_xla_send_recv_source_target_pairs");
      if (f == nullptr || !inst->attrs().channel_id.has_value()) continue;
      auto pairs = ParsePairs(f->value);
      if (!pairs.has_value()) {
        return InstError(inst,
                         "malformed _xla_send_recv_source_target_pairs "
                         "'",
                         f->value, "'");
      }
      absl::flat_hash_set<int64_t> sources, targets;
      for (const auto& [src, dst] : *pairs) {
        if (!sources.insert(src).second) {
          return InstError(inst, "Source ", src,
                           " appears more than once in the send/recv "
                           "source-target pairs");
        }
        if (!targets.insert(dst).second) {
          return InstError(inst, "Target ", dst,
                           " appears more than once in the send/recv "
                           "source-target pairs");
        }
      }
      std::string key;
      for (const auto& [src, dst] : *pairs) StrAppend(&key, src, ",", dst, ";");
      P2P& group = p2p[{inst->attrs().channel_id.value_or(-1), key}];
      (op == Opcode::kSend ? group.sends : group.recvs).push_back(inst);
      // Cycle detection over the pairs.
      absl::flat_hash_map<int64_t, int64_t> next(pairs->begin(), pairs->end());
      bool cyclic = false;
      for (const auto& [src, dst] : *pairs) {
        int64_t cur = dst;
        for (size_t steps = 0; steps <= pairs->size() && !cyclic; ++steps) {
          if (cur == src) cyclic = true;
          auto it = next.find(cur);
          if (it == next.end()) break;
          cur = it->second;
        }
      }
      if (cyclic && op == Opcode::kSend) {
        // Find this send's send-done and any recv of the group in the same
        // computation; the recv must come before the send-done.
        const Instruction* done = nullptr;
        for (const Instruction* u : inst->users()) {
          if (u->opcode() == Opcode::kSendDone) done = u;
        }
        if (done == nullptr) continue;
        const auto order = c->instructions();
        auto pos = [&](const Instruction* x) {
          return std::find(order.begin(), order.end(), x) - order.begin();
        };
        for (const Instruction* other : order) {
          if (other->opcode() != Opcode::kRecv) continue;
          const FrontendAttribute* g =
              FindFrontendAttr(other, "_xla_send_recv_source_target_pairs");
          if (g == nullptr || g->value != f->value) continue;
          if (pos(done) < pos(other)) {
            return InstError(inst, "cyclic send/recv source-target pairs ",
                             f->value, " deadlock: '", done->name(),
                             "' is scheduled before recv '", other->name(),
                             "'");
          }
        }
      }
    }
  }
  for (const auto& [key, group] : p2p) {
    if (group.sends.size() != group.recvs.size()) {
      const Instruction* example =
          group.sends.empty() ? group.recvs[0] : group.sends[0];
      return InstError(example, "scheduled send/recv on channel ", key.first,
                       " are unmatched: ", group.sends.size(), " send(s) and ",
                       group.recvs.size(),
                       " recv(s) with the same source-target pairs");
    }
  }
  return absl::OkStatus();
}

namespace {

// Same tree and dimensions; element types and layouts may differ (entry
// layouts written by some tools keep the original element types).
bool SameStructureAndDims(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() ||
        a.tuple_shapes_size() != b.tuple_shapes_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i) {
      if (!SameStructureAndDims(a.tuple_shapes(i), b.tuple_shapes(i))) {
        return false;
      }
    }
    return true;
  }
  if (a.IsArray() && b.IsArray()) return CompatibleIgnoringElementType(a, b);
  return a.Compatible(b);
}

}  // namespace

absl::Status Verifier::VerifyEntryLayoutAndAliases() {
  const Computation* entry = module_.entry_computation();
  const ModuleConfig& config = module_.config();
  const Shape& root = entry->root_instruction()->shape();
  if (config.entry_computation_layout.has_value()) {
    const ComputationLayout& layout = *config.entry_computation_layout;
    if (!SameStructureAndDims(root, layout.result)) {
      return ModError("Shape of the root instruction of entry computation (",
                      ShapeText(root),
                      ") should be compatible to one specified in module's "
                      "entry computation layout (",
                      ShapeText(layout.result), ")");
    }
    if (static_cast<int64_t>(layout.parameters.size()) !=
        entry->num_parameters()) {
      return ModError("Number of parameters in entry computation layout (",
                      layout.parameters.size(),
                      ") must be same as number of parameters of entry "
                      "computation (",
                      entry->num_parameters(), ")");
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      const Shape& p = entry->parameter_instruction(i)->shape();
      if (!SameStructureAndDims(p, layout.parameters[i])) {
        return ModError("Shape of the entry computation parameter ", i, " is ",
                        ShapeText(p),
                        " should be compatible to the one specified in "
                        "module's entry computation layout ",
                        ShapeText(layout.parameters[i]));
      }
    }
  }
  if (config.input_output_alias.has_value()) {
    std::set<std::pair<int64_t, ShapeIndex>> params_seen;
    for (const InputOutputAlias& alias : *config.input_output_alias) {
      if (root.SubShape(alias.output_index) == nullptr) {
        return ModError("input_output_alias output index ",
                        IndexText(alias.output_index),
                        " is invalid for the entry result ", ShapeText(root));
      }
      if (alias.parameter < 0 || alias.parameter >= entry->num_parameters()) {
        return ModError("input_output_alias parameter ", alias.parameter,
                        " is out of range");
      }
      const Shape& param =
          entry->parameter_instruction(alias.parameter)->shape();
      if (param.SubShape(alias.parameter_index) == nullptr) {
        return ModError("input_output_alias parameter index ",
                        IndexText(alias.parameter_index),
                        " is invalid for parameter ", alias.parameter);
      }
      if (!params_seen.emplace(alias.parameter, alias.parameter_index).second) {
        return ModError("parameter ", alias.parameter, " at ",
                        IndexText(alias.parameter_index),
                        " is aliased with more than one output");
      }
      if (alias.kind == InputOutputAlias::Kind::kMustAlias &&
          config.entry_computation_layout.has_value()) {
        const ComputationLayout& layout = *config.entry_computation_layout;
        const Shape* r = layout.result.SubShape(alias.output_index);
        const Shape* p =
            alias.parameter < static_cast<int64_t>(layout.parameters.size())
                ? layout.parameters[alias.parameter].SubShape(
                      alias.parameter_index)
                : nullptr;
        if (r != nullptr && p != nullptr && !(*r == *p)) {
          return ModError("Shape and memory space of the result at index ",
                          IndexText(alias.output_index), " (", r->ToString(),
                          ") must be the same as the shape and memory space "
                          "of aliased parameter ",
                          alias.parameter, " at index ",
                          IndexText(alias.parameter_index), " (", p->ToString(),
                          ")");
        }
      }
    }
  }
  if (config.buffer_donor.has_value()) {
    for (const BufferDonor& d : *config.buffer_donor) {
      if (d.parameter < 0 || d.parameter >= entry->num_parameters()) {
        return ModError("buffer_donor parameter ", d.parameter,
                        " is out of range");
      }
      if (entry->parameter_instruction(d.parameter)
              ->shape()
              .SubShape(d.index) == nullptr) {
        return ModError("buffer_donor index ", IndexText(d.index),
                        " is invalid for parameter ", d.parameter);
      }
    }
  }
  return absl::OkStatus();
}

// Buffers (b(...) shapes) are linear values: they come from Pin-like custom
// calls or computation parameters, every custom call that takes or produces
// one must alias it, and each buffer is consumed at most once.
absl::Status Verifier::VerifyBuffers() {
  const Computation* entry = module_.entry_computation();
  for (const Instruction* p : entry->parameter_instructions()) {
    if (HasBuffer(p->shape())) {
      return InstError(p, "entry computation parameters cannot be buffers");
    }
  }
  if (HasBuffer(entry->root_instruction()->shape())) {
    return InstError(entry->root_instruction(),
                     "the entry computation cannot return a buffer");
  }
  for (const auto& c : module_.computations()) {
    for (const Instruction* inst : c->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall) {
        const auto& aliases = inst->attrs().output_to_operand_aliasing;
        std::set<std::pair<int64_t, ShapeIndex>> aliased_operands;
        std::set<ShapeIndex> aliased_outputs;
        for (const OutputOperandAlias& a : aliases) {
          if (!aliased_operands.emplace(a.operand, a.operand_index).second) {
            return InstError(inst, "operand ", a.operand, " at ",
                             IndexText(a.operand_index),
                             " is aliased with more than one output");
          }
          aliased_outputs.insert(a.output_index);
        }
        ShapeIndex index;
        absl::Status status = absl::OkStatus();
        if (inst->operand_count() > 0) {
          ForEachLeaf(
              inst->shape(), &index, [&](const Shape& s, const ShapeIndex& i) {
                if (status.ok() && s.IsBuffer() &&
                    !aliased_outputs.contains(i)) {
                  status = InstError(inst, "buffer result at ", IndexText(i),
                                     " must alias an operand "
                                     "(output_to_operand_aliasing)");
                }
              });
        }
        if (!status.ok()) return status;
        for (int64_t k = 0; k < inst->operand_count(); ++k) {
          index.clear();
          ForEachLeaf(inst->operand(k)->shape(), &index,
                      [&](const Shape& s, const ShapeIndex& i) {
                        if (status.ok() && s.IsBuffer() &&
                            !aliased_operands.contains({k, i})) {
                          status = InstError(inst, "buffer operand ", k, " at ",
                                             IndexText(i),
                                             " must be aliased to a result "
                                             "(output_to_operand_aliasing)");
                        }
                      });
          if (!status.ok()) return status;
        }
      }
      // Each buffer leaf of this value is consumed at most once.
      if (!HasBuffer(inst->shape())) continue;
      std::map<ShapeIndex, int64_t> uses;
      auto use_all = [&](const ShapeIndex& prefix, int64_t times) {
        const Shape* sub = inst->shape().SubShape(prefix);
        if (sub == nullptr) return;
        ShapeIndex index = prefix;
        ForEachLeaf(*sub, &index, [&](const Shape& s, const ShapeIndex& i) {
          if (s.IsBuffer()) uses[i] += times;
        });
      };
      for (const Instruction* u : inst->users()) {
        if (u->opcode() == Opcode::kGetTupleElement) {
          use_all({u->tuple_index()}, 1);
          continue;
        }
        const int64_t times =
            std::count(u->operands().begin(), u->operands().end(), inst);
        use_all({}, times);
      }
      if (inst->IsRoot()) use_all({}, 1);
      for (const auto& [i, n] : uses) {
        if (n > 1) {
          return InstError(inst, "buffer at ", IndexText(i), " is used ", n,
                           " times; a buffer may only be used once");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verifier::Run() {
  const ModuleConfig& config = module_.config();
  // debug_attributes: log_mode takes default or fusion_debugger.
  for (size_t pos = config.debug_attributes.find("log_mode=");
       pos != std::string::npos;
       pos = config.debug_attributes.find("log_mode=", pos + 1)) {
    std::string_view mode =
        std::string_view(config.debug_attributes).substr(pos + 9);
    mode = mode.substr(0, mode.find_first_of(",} "));
    if (mode != "default" && mode != "fusion_debugger") {
      return ModError("unknown debug_attributes log_mode '", mode, "'");
    }
  }
  replica_count_ = std::max<int64_t>(1, config.replica_count.value_or(1));
  num_partitions_ = std::max<int64_t>(1, config.num_partitions.value_or(1));
  if (absl::Status s = VerifyStructure(); !s.ok()) return s;
  for (const auto& c : module_.computations()) {
    for (const Instruction* inst : c->instructions()) {
      if (absl::Status s = VerifyInstruction(inst); !s.ok()) return s;
    }
  }
  if (absl::Status s = VerifyAsyncPairs(); !s.ok()) return s;
  if (absl::Status s = VerifyChannels(); !s.ok()) return s;
  if (absl::Status s = VerifyEntryLayoutAndAliases(); !s.ok()) return s;
  return VerifyBuffers();
}

}  // namespace

absl::Status VerifyModule(const Module& module, const VerifierOptions& options,
                          const std::string& file) {
  Verifier verifier(module, options, file);
  return verifier.Run();
}

}  // namespace hlogym
