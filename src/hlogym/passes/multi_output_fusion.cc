#include "hlogym/passes/multi_output_fusion.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlogym/cost/device.h"
#include "hlogym/cost/gpu_performance_model.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/passes/fusion_ops.h"
#include "hlogym/passes/gpu_fusible.h"

namespace hlogym {
namespace {

// A shared operand this small is worth sharing even when the siblings read
// disjoint slices of it.
constexpr int64_t kSmallSharedOperandBytes = 1024;
// From this many siblings on, their connectivity is computed in one pass.
constexpr size_t kDenseSiblings = 8;

// Reachability between the kernels of one computation while fusions merge
// them. Nodes are the instructions present at the start; a fusion merges
// its members into one node, and get-tuple-elements created by the pass
// stand for the node they read. Merging only adds paths (through the
// merged node), so the structure keeps the merged graph itself rather than
// a stale snapshot. Positions form a topological order that each merge
// repairs locally (Pearce-Kelly): between the two merged nodes, what
// depends on the earlier one moves behind the merged node and what the
// later one depends on moves before it. Queries are DFS bounded by
// position, so the work stays within the region between the nodes
// involved instead of the whole graph.
class MergingReachability {
 public:
  explicit MergingReachability(const Computation& computation) {
    const std::vector<Instruction*> po = computation.MakeInstructionPostOrder();
    const int n = static_cast<int>(po.size());
    parent_.resize(n);
    ord_.resize(n);
    preds_.resize(n);
    succs_.resize(n);
    stamp_.assign(n, 0);
    node_of_.reserve(n);
    for (int i = 0; i < n; ++i) {
      node_of_[po[i]->unique_id()] = i;
      parent_[i] = i;
      ord_[i] = i;
    }
    for (int i = 0; i < n; ++i) {
      auto add = [&](const Instruction* dep) {
        auto it = node_of_.find(dep->unique_id());
        if (it == node_of_.end()) return;
        preds_[i].push_back(it->second);
        succs_[it->second].push_back(i);
      };
      for (const Instruction* o : po[i]->operands()) add(o);
      for (const Instruction* p : po[i]->control_predecessors()) add(p);
    }
  }

  // The node standing for `inst`; -1 if unknown.
  int Node(const Instruction* inst) {
    while (inst != nullptr) {
      auto it = node_of_.find(inst->unique_id());
      if (it != node_of_.end()) return Find(it->second);
      if (inst->opcode() != Opcode::kGetTupleElement ||
          inst->operand_count() != 1) {
        return -1;
      }
      inst = inst->operand(0);
    }
    return -1;
  }

  // True if `to` depends on `from` (or both are the same node). Unknown
  // instructions count as connected, so nothing unsafe gets fused.
  bool IsReachable(const Instruction* from, const Instruction* to) {
    const int a = Node(from);
    const int b = Node(to);
    if (a < 0 || b < 0) return true;
    return Reaches(a, b);
  }

  // True if a path leads from `from` to `to` through some other node: `to`
  // reads (transitively) a value computed from `from` besides reading it
  // directly. One bounded search instead of one per operand of `to`.
  bool ReachesIndirectly(const Instruction* from, const Instruction* to) {
    const int a = Node(from);
    const int b = Node(to);
    if (a < 0 || b < 0 || a == b) return true;
    const int64_t lo = ord_[a];
    if (ord_[b] < lo) return false;
    const uint32_t g = NewStamp();
    stack_.clear();
    stamp_[b] = g;
    for (int p : preds_[b]) {
      p = Find(p);
      if (p == a || p == b || ord_[p] < lo || stamp_[p] == g) continue;
      stamp_[p] = g;
      stack_.push_back(p);
    }
    return Search(a, lo, g);
  }

  bool IsConnected(const Instruction* x, const Instruction* y) {
    return IsReachable(x, y) || IsReachable(y, x);
  }

  // Reachability among the members of `set`: row a holds bit b when b
  // depends on a (every row holds its own bit). One pass in topological
  // order over what the members reach up to the last of them, instead of a
  // search per pair: a broadcast read by a hundred instructions across a
  // whole model has thousands of pairs.
  std::vector<std::vector<uint64_t>> ReachMatrix(
      const std::vector<Instruction*>& set) {
    const size_t k = set.size();
    const size_t words = (k + 63) / 64;
    std::vector<std::vector<uint64_t>> reach;
    for (size_t a = 0; a < k; ++a) reach.emplace_back(words, 0);
    if (slot_.size() < stamp_.size()) slot_.resize(stamp_.size());
    const uint32_t g = NewStamp();
    std::vector<uint64_t> bits;
    absl::flat_hash_map<int, std::vector<size_t>> members;
    using Entry = std::pair<int64_t, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    auto visit = [&](int n) {
      if (stamp_[n] == g) return;
      stamp_[n] = g;
      slot_[n] = static_cast<int>(bits.size() / words);
      bits.resize(bits.size() + words, 0);
      heap.push({ord_[n], n});
    };
    int64_t limit = -1;
    for (size_t a = 0; a < k; ++a) {
      const int n = Node(set[a]);
      if (n < 0) {
        // Unknown: connected to everything.
        for (size_t b = 0; b < k; ++b) {
          reach[a][b / 64] |= uint64_t{1} << (b % 64);
          reach[b][a / 64] |= uint64_t{1} << (a % 64);
        }
        continue;
      }
      visit(n);
      bits[slot_[n] * words + a / 64] |= uint64_t{1} << (a % 64);
      members[n].push_back(a);
      limit = std::max(limit, ord_[n]);
    }
    while (!heap.empty()) {
      const int x = heap.top().second;
      heap.pop();
      const size_t from = slot_[x] * words;
      if (auto it = members.find(x); it != members.end()) {
        for (size_t w = 0; w < words; ++w) {
          for (uint64_t m = bits[from + w]; m != 0; m &= m - 1) {
            const size_t b = w * 64 + std::countr_zero(m);
            for (size_t s : it->second) {
              reach[b][s / 64] |= uint64_t{1} << (s % 64);
            }
          }
        }
      }
      for (int y : succs_[x]) {
        y = Find(y);
        if (y == x || ord_[y] > limit) continue;
        visit(y);
        const size_t to = slot_[y] * words;
        for (size_t w = 0; w < words; ++w) bits[to + w] |= bits[from + w];
      }
    }
    return reach;
  }

  // Records that nodes `a` and `b` (taken with Node() before fusing: the
  // members are gone afterwards) became the single instruction `fused`.
  // The caller guarantees no path joins them through a third node. An
  // unknown side leaves `fused` unknown, so it counts as connected.
  void Merge(int a, int b, const Instruction* fused) {
    if (a < 0 || b < 0) return;
    a = Find(a);
    b = Find(b);
    if (a != b) {
      if (ord_[a] > ord_[b]) std::swap(a, b);
      const int64_t lo = ord_[a];
      const int64_t hi = ord_[b];
      std::vector<int> forward = Collect(a, b, lo, hi, /*forward=*/true);
      std::vector<int> backward = Collect(b, a, lo, hi, /*forward=*/false);
      std::vector<int64_t> slots = {lo, hi};
      for (int f : forward) slots.push_back(ord_[f]);
      for (int g : backward) slots.push_back(ord_[g]);
      std::sort(slots.begin(), slots.end());
      auto by_ord = [&](int p, int q) { return ord_[p] < ord_[q]; };
      std::sort(forward.begin(), forward.end(), by_ord);
      std::sort(backward.begin(), backward.end(), by_ord);
      // Union: the node with more edges absorbs the other's lists.
      int rep = a;
      int other = b;
      if (preds_[a].size() + succs_[a].size() <
          preds_[b].size() + succs_[b].size()) {
        std::swap(rep, other);
      }
      parent_[other] = rep;
      Append(preds_[rep], preds_[other]);
      Append(succs_[rep], succs_[other]);
      Compact(rep, preds_[rep]);
      Compact(rep, succs_[rep]);
      size_t k = 0;
      for (int g : backward) ord_[g] = slots[k++];
      ord_[rep] = slots[k++];
      for (int f : forward) ord_[f] = slots[k++];
      a = rep;
    }
    node_of_[fused->unique_id()] = a;
  }

 private:
  int Find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  static void Append(std::vector<int>& to, std::vector<int>& from) {
    to.insert(to.end(), from.begin(), from.end());
    std::vector<int>().swap(from);
  }

  // Maps the entries of `edges` to their nodes and drops duplicates and
  // edges inside node `self`, so a node that absorbed many others keeps
  // one entry per neighbour.
  void Compact(int self, std::vector<int>& edges) {
    const uint32_t g = NewStamp();
    size_t out = 0;
    for (int e : edges) {
      const int n = Find(e);
      if (n == self || stamp_[n] == g) continue;
      stamp_[n] = g;
      edges[out++] = n;
    }
    edges.resize(out);
  }

  uint32_t NewStamp() {
    if (++generation_ == 0) {
      std::fill(stamp_.begin(), stamp_.end(), 0);
      generation_ = 1;
    }
    return generation_;
  }

  bool Reaches(int a, int b) {
    if (a == b) return true;
    const int64_t lo = ord_[a];
    if (ord_[b] < lo) return false;
    const uint32_t g = NewStamp();
    stack_.assign(1, b);
    stamp_[b] = g;
    return Search(a, lo, g);
  }

  // Continues a search towards operands from the nodes on the stack; true
  // when it meets `target`. Nodes before `lo` cannot depend on it.
  bool Search(int target, int64_t lo, uint32_t g) {
    while (!stack_.empty()) {
      const int x = stack_.back();
      stack_.pop_back();
      for (int p : preds_[x]) {
        p = Find(p);
        if (p == target) return true;
        if (p == x || ord_[p] < lo || stamp_[p] == g) continue;
        stamp_[p] = g;
        stack_.push_back(p);
      }
    }
    return false;
  }

  // Nodes strictly between positions lo and hi reached from `start` along
  // user edges (forward) or operand edges (backward), not passing `stop`.
  std::vector<int> Collect(int start, int stop, int64_t lo, int64_t hi,
                           bool forward) {
    std::vector<int> found;
    const uint32_t g = NewStamp();
    stack_.assign(1, start);
    stamp_[start] = g;
    while (!stack_.empty()) {
      const int x = stack_.back();
      stack_.pop_back();
      for (int p : forward ? succs_[x] : preds_[x]) {
        p = Find(p);
        if (p == stop || p == x || stamp_[p] == g) continue;
        if (ord_[p] <= lo || ord_[p] >= hi) continue;
        stamp_[p] = g;
        found.push_back(p);
        stack_.push_back(p);
      }
    }
    return found;
  }

  std::vector<int> parent_;
  std::vector<int64_t> ord_;
  std::vector<std::vector<int>> preds_;
  std::vector<std::vector<int>> succs_;
  std::vector<uint32_t> stamp_;
  std::vector<int> slot_;  // ReachMatrix: row of a visited node
  uint32_t generation_ = 0;
  std::vector<int> stack_;
  absl::flat_hash_map<int64_t, int> node_of_;
};

bool HasControlEdges(const Instruction& inst) {
  return !inst.control_predecessors().empty() ||
         !inst.control_successors().empty();
}

bool IsFusion(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fused_computation() != nullptr &&
         inst.fused_computation()->root_instruction() != nullptr;
}

bool IsCustomFusion(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion &&
         inst.fusion_kind() == FusionKind::kCustom;
}

// Multi-output fusions first, then fusions, then unfused ops: fusing into
// existing fusions keeps the other fusion opportunities open.
int FusionPriority(const Instruction& inst) {
  if (IsMultiOutputFusion(inst)) return 2;
  if (inst.opcode() == Opcode::kFusion) return 1;
  return 0;
}

// The slice through which `inst` reads `parent`, if it reads it through
// exactly one slice (a slice itself, or a fusion whose parameter for
// `parent` has a slice as its only user).
const Instruction* FindUniqueSlice(const Instruction* parent,
                                   const Instruction* inst) {
  if (inst->opcode() == Opcode::kSlice) return inst;
  if (!IsFusion(*inst)) return nullptr;
  const Computation* body = inst->fused_computation();
  const Instruction* result = nullptr;
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    if (inst->operand(i) != parent) continue;
    // The parameter is read more than once: no unique slice.
    if (result != nullptr || i >= body->num_parameters()) return nullptr;
    const Instruction* param = body->parameter_instruction(i);
    if (param->user_count() != 1) return nullptr;
    result = param->users()[0];
    if (result->opcode() != Opcode::kSlice) return nullptr;
  }
  return result;
}

// Refuses siblings that read disjoint slices of a large shared operand:
// fusing them shares no memory traffic.
FusionDecision ParameterSlicesOverlap(const Instruction& a,
                                      const Instruction& b,
                                      const Instruction* parent) {
  const Shape& s = parent->shape();
  if (!s.IsArray()) return FusionDecision::Allow();
  if (s.ElementsIn() * ByteWidth(s.element_type()) < kSmallSharedOperandBytes) {
    return FusionDecision::Allow();
  }
  const Instruction* sa = FindUniqueSlice(parent, &a);
  const Instruction* sb = FindUniqueSlice(parent, &b);
  if (sa == nullptr || sb == nullptr) return FusionDecision::Allow();
  const std::vector<SliceDimension>& da = sa->attrs().slice;
  const std::vector<SliceDimension>& db = sb->attrs().slice;
  const size_t rank = static_cast<size_t>(s.rank());
  if (da.size() != rank || db.size() != rank) return FusionDecision::Allow();
  for (size_t d = 0; d < rank; ++d) {
    if (!(da[d].start < db[d].limit && db[d].start < da[d].limit)) {
      return FusionDecision::Forbid("slices are non-overlapping");
    }
  }
  return FusionDecision::Allow();
}

bool IsSiblingFusionCandidate(const Instruction& inst) {
  if (inst.user_count() == 0 || HasControlEdges(inst) ||
      !IsFusibleAsMultiOutputFusionRoot(inst) ||
      IsNestableVariadicReduction(inst)) {
    return false;
  }
  // Users of a multi-output fusion must read it through get-tuple-elements.
  if (!IsMultiOutputFusion(inst)) return true;
  return std::all_of(inst.users().begin(), inst.users().end(),
                     [](const Instruction* u) {
                       return u->opcode() == Opcode::kGetTupleElement;
                     });
}

class ComputationFusion {
 public:
  ComputationFusion(Computation* computation, Rewriter& rw,
                    const GpuPerformanceModel& model, bool siblings,
                    bool producer_consumer)
      : computation_(computation),
        rw_(rw),
        model_(model),
        siblings_enabled_(siblings),
        producer_consumer_enabled_(producer_consumer),
        reach_(*computation) {}

  absl::StatusOr<bool> Run() {
    std::vector<std::pair<int64_t, Instruction*>> order;
    for (Instruction* i : computation_->MakeInstructionPostOrder()) {
      order.push_back({i->unique_id(), i});
    }
    bool changed = false;
    // Uses before defs: the get-tuple-elements a fusion adds come before
    // the instruction being visited and stay out of the way.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (rw_.IsRemoved(it->first)) continue;
      Instruction* producer = it->second;
      if (producer->opcode() == Opcode::kConstant ||
          IsCustomFusion(*producer)) {
        continue;
      }
      if (siblings_enabled_) {
        HLOGYM_ASSIGN_OR_RETURN(bool fused, FuseSiblingsOf(producer));
        changed |= fused;
      }
      if (producer_consumer_enabled_ && !rw_.IsRemoved(it->first)) {
        HLOGYM_ASSIGN_OR_RETURN(bool fused, FuseIntoConsumer(producer));
        changed |= fused;
      }
    }
    return changed;
  }

 private:
  FusionDecision CanFuseSiblings(const Instruction& a, const Instruction& b,
                                 const Instruction& parent,
                                 const std::function<bool()>& connected) {
    // Cheap structural checks first; the result does not depend on the
    // order.
    if (FusionDecision d = ShapesCompatibleForMultiOutputFusion(a, b); !d) {
      return d;
    }
    if (connected()) {
      return FusionDecision::Forbid(
          StrCat(a.name(), " and ", b.name(), " are connected"));
    }
    if (FusionDecision d = ParameterSlicesOverlap(a, b, &parent); !d) {
      return d;
    }
    // The emitter only handles an in-place dynamic-update-slice as the
    // single root of a fusion.
    if (RootIsDynamicUpdateSlice(a) || RootIsDynamicUpdateSlice(b)) {
      return FusionDecision::Forbid("can't fuse multiple DUSs");
    }
    return FusionFitsInBudget(a, b, /*is_consumer_producer_fusion=*/false);
  }

  static bool Bit(const std::vector<uint64_t>& row, size_t b) {
    return (row[b / 64] >> (b % 64)) & 1;
  }

  absl::StatusOr<bool> FuseSiblingsOf(Instruction* parent) {
    if (IsEffectiveScalar(parent->shape())) return false;
    std::vector<Instruction*> siblings;
    for (Instruction* u : parent->users()) {
      if (IsSiblingFusionCandidate(*u)) siblings.push_back(u);
    }
    if (siblings.size() < 2) return false;
    std::stable_sort(siblings.begin(), siblings.end(),
                     [](const Instruction* a, const Instruction* b) {
                       return FusionPriority(*a) > FusionPriority(*b);
                     });
    // Only fusions absorb siblings.
    if (siblings[0]->opcode() != Opcode::kFusion) return false;
    // Many siblings: their connectivity as one matrix (rows parallel to
    // `siblings`), kept closed under the merges below.
    const bool dense = siblings.size() > kDenseSiblings;
    std::vector<std::vector<uint64_t>> matrix;
    std::vector<size_t> row(siblings.size());
    for (size_t k = 0; k < row.size(); ++k) row[k] = k;
    if (dense) matrix = reach_.ReachMatrix(siblings);
    // Unique ids, parallel to `siblings`: in apply mode a fusion removes
    // its members and the operands they leave unused, which can be other
    // siblings (one sibling reading another).
    std::vector<int64_t> ids(siblings.size());
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = siblings[k]->unique_id();
    bool changed = false;
    for (size_t i = 0; i < siblings.size(); ++i) {
      if (siblings[i]->opcode() != Opcode::kFusion) continue;
      for (size_t j = i + 1; j < siblings.size();) {
        Instruction* remaining = siblings[i];
        Instruction* fused = siblings[j];
        auto connected = [&] {
          if (!dense) return reach_.IsConnected(remaining, fused);
          return Bit(matrix[row[i]], row[j]) || Bit(matrix[row[j]], row[i]);
        };
        if (!CanFuseSiblings(*remaining, *fused, *parent, connected)) {
          ++j;
          continue;
        }
        // An input (reduction or transpose) hero on either side makes the
        // result an input fusion.
        const bool input =
            remaining->fusion_kind() == FusionKind::kInput ||
            (fused->opcode() == Opcode::kFusion &&
             fused->fusion_kind() == FusionKind::kInput) ||
            ChooseFusionKind(*remaining, *fused) == FusionKind::kInput;
        const int remaining_node = reach_.Node(remaining);
        const int fused_node = reach_.Node(fused);
        absl::StatusOr<Instruction*> made =
            FuseSiblings(rw_, remaining, fused,
                         input ? FusionKind::kInput : FusionKind::kLoop);
        // The fusion operations refuse before building anything: skip.
        if (!made.ok()) {
          if (!absl::IsInvalidArgument(made.status())) return made.status();
          ++j;
          continue;
        }
        Instruction* fusion = *made;
        changed = true;
        if (!rw_.dry()) {
          reach_.Merge(remaining_node, fused_node, fusion);
          siblings[i] = fusion;
          ids[i] = fusion->unique_id();
          if (dense) {
            // Whatever reaches either now reaches all both reached.
            std::vector<uint64_t> both = matrix[row[i]];
            for (size_t w = 0; w < both.size(); ++w) {
              both[w] |= matrix[row[j]][w];
            }
            for (std::vector<uint64_t>& r : matrix) {
              if (!Bit(r, row[i]) && !Bit(r, row[j])) continue;
              for (size_t w = 0; w < both.size(); ++w) r[w] |= both[w];
            }
          }
        }
        siblings.erase(siblings.begin() + static_cast<int64_t>(j));
        row.erase(row.begin() + static_cast<int64_t>(j));
        ids.erase(ids.begin() + static_cast<int64_t>(j));
        if (rw_.dry()) continue;
        for (size_t k = 0; k < siblings.size();) {
          if (k == i || !rw_.IsRemoved(ids[k])) {
            ++k;
            continue;
          }
          siblings.erase(siblings.begin() + static_cast<int64_t>(k));
          row.erase(row.begin() + static_cast<int64_t>(k));
          ids.erase(ids.begin() + static_cast<int64_t>(k));
          if (k < i) --i;
          if (k < j) --j;
        }
      }
    }
    return changed;
  }

  // A path from the producer to another operand of the consumer would
  // become a cycle through the fusion.
  FusionDecision OperandReachableFromProducer(const Instruction& producer,
                                              const Instruction& consumer) {
    if (reach_.ReachesIndirectly(&producer, &consumer)) {
      return FusionDecision::Forbid(
          StrCat(producer.name(), " would introduce a cycle when fused"));
    }
    return FusionDecision::Allow();
  }

  FusionDecision ProducerCandidateIsFusible(const Instruction& producer,
                                            const Instruction& consumer) {
    if (HasControlEdges(consumer) ||
        !IsFusibleAsMultiOutputFusionRoot(consumer)) {
      return FusionDecision::Forbid(
          "consumer not eligible as multi-output fusion root");
    }
    if (FusionDecision d =
            ShapesCompatibleForMultiOutputFusion(consumer, producer);
        !d) {
      return d;
    }
    if (FusionDecision d = OperandReachableFromProducer(producer, consumer);
        !d) {
      return d;
    }
    if (FusionDecision d = FusionFitsInBudget(
            producer, consumer, /*is_consumer_producer_fusion=*/false);
        !d) {
      return d;
    }
    if (FusionDecision d = ProducerConsumerMergedTooLarge(producer, consumer);
        !d) {
      return d;
    }
    absl::StatusOr<GpuPerformanceModel::RunTimes> t =
        model_.EstimateMultiOutputRunTimes(producer, consumer);
    if (!t.ok())
      return FusionDecision::Forbid(std::string(t.status().message()));
    if (t->time_fused > t->time_unfused) {
      return FusionDecision::Forbid("will execute slower if fused");
    }
    return FusionDecision::Allow();
  }

  absl::StatusOr<bool> FuseIntoConsumer(Instruction* producer) {
    if (HasControlEdges(*producer) ||
        !IsProducerMultiOutputFusible(*producer)) {
      return false;
    }
    // A single consumer that is not multi-output yet was already weighed
    // by the producer-consumer fusion passes.
    if (producer->user_count() == 0 ||
        (producer->user_count() == 1 &&
         !IsMultiOutputFusion(*producer->users()[0]))) {
      return false;
    }
    Instruction* best = nullptr;
    for (Instruction* consumer : producer->users()) {
      if (!ProducerCandidateIsFusible(*producer, *consumer)) continue;
      if (best == nullptr ||
          FusionPriority(*consumer) > FusionPriority(*best)) {
        best = consumer;
      }
    }
    if (best == nullptr) return false;
    const FusionKind kind = best->opcode() == Opcode::kFusion
                                ? best->fusion_kind()
                                : ChooseFusionKind(*producer, *best);
    const int producer_node = reach_.Node(producer);
    const int consumer_node = reach_.Node(best);
    absl::StatusOr<Instruction*> fusion = FuseProducerIntoConsumer(
        rw_, producer, best, kind, ExternalUses::kMultiOutput);
    if (!fusion.ok()) {
      if (absl::IsInvalidArgument(fusion.status())) return false;
      return fusion.status();
    }
    if (!rw_.dry()) reach_.Merge(producer_node, consumer_node, *fusion);
    return true;
  }

  Computation* computation_;
  Rewriter& rw_;
  const GpuPerformanceModel& model_;
  bool siblings_enabled_;
  bool producer_consumer_enabled_;
  MergingReachability reach_;
};

}  // namespace

GpuMultiOutputFusion::GpuMultiOutputFusion() {
  DeclareRules({
      {std::string(kSiblingRule), 0,
       "fuse unconnected, shape-compatible users of a common operand into "
       "one multi-output fusion"},
      {std::string(kProducerConsumerRule), 0,
       "make a producer with several users an extra output of a consumer "
       "when the performance model says fused <= unfused"},
  });
}

absl::Status GpuMultiOutputFusion::SetOption(std::string_view key,
                                             std::string_view value) {
  if (key == "device") {
    if (value.empty()) {
      return absl::InvalidArgumentError("option 'device' needs a value");
    }
    HLOGYM_RETURN_IF_ERROR(LoadDevice(value).status());
    device_ = std::string(value);
    return absl::OkStatus();
  }
  return Pass::SetOption(key, value);
}

absl::StatusOr<bool> GpuMultiOutputFusion::RunWith(Module* module,
                                                   Rewriter& rw) {
  HLOGYM_ASSIGN_OR_RETURN(GpuDevice device, LoadDevice(device_));
  GpuPerformanceModel model(std::move(device));
  bool changed = false;
  for (Computation* c : GetFusibleComputations(*module)) {
    if (c->instruction_count() < 2) continue;
    ComputationFusion fusion(c, rw, model, rule_enabled(0), rule_enabled(1));
    HLOGYM_ASSIGN_OR_RETURN(bool fused, fusion.Run());
    changed |= fused;
  }
  return changed;
}

}  // namespace hlogym
