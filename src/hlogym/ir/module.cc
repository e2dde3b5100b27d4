#include "hlogym/ir/module.h"

#include <algorithm>
#include <charconv>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {

namespace {

// Splits "add.12" into ("add", 12); names without a numeric suffix give 0.
// One backward pass: this runs for every instruction a fusion clones.
std::pair<std::string_view, int64_t> SplitSuffix(std::string_view name) {
  size_t k = name.size();
  while (k > 0 && absl::ascii_isdigit(name[k - 1])) --k;
  const size_t digits = name.size() - k;
  if (digits == 0 || k == 0 || name[k - 1] != '.') {
    return {name, 0};  // "add" behaves like "add.0": the next is "add.1"
  }
  int64_t n = 0;
  if (digits <= 18) {  // cannot overflow
    for (size_t d = k; d < name.size(); ++d) n = n * 10 + (name[d] - '0');
  } else if (std::from_chars(name.data() + k, name.data() + name.size(), n)
                 .ec != std::errc()) {
    return {name, 0};
  }
  return {name.substr(0, k - 1), n};
}

// Where `stem` goes in a stem cache of `size` entries (a power of two).
size_t StemCacheIndex(std::string_view stem, size_t size) {
  if (stem.empty()) return 0;
  const size_t h = stem.size() * 31 + static_cast<unsigned char>(stem[0]) +
                   static_cast<unsigned char>(stem.back()) * 7;
  return h & (size - 1);
}

// A name based on `base` that `names` does not hold yet, recorded there.
// `base` itself when free; else "stem.N" with N past every suffix of the
// stem in use (suffixes below are treated as taken). Lookups go through
// absl::string_view so that only a new stem allocates: dry fusion names
// hundreds of thousands of clones. `cache` (optional) keeps recent stems'
// entries, emptied when a stem is added.
template <typename Names, typename Cache>
std::string UniqueName(Names& names, std::string_view base, Cache* cache) {
  auto [stem, n] = SplitSuffix(base);
  typename Names::mapped_type* use = nullptr;
  typename Cache::value_type* slot = nullptr;
  if (cache != nullptr) {
    slot = &(*cache)[StemCacheIndex(stem, cache->size())];
    if (slot->use != nullptr && slot->stem == stem) use = slot->use;
  }
  if (use == nullptr) {
    auto it = names.find(absl::string_view(stem.data(), stem.size()));
    if (it == names.end()) {
      it =
          names.emplace(std::string(stem), typename Names::mapped_type()).first;
      if (cache != nullptr) {
        for (auto& e : *cache) e.use = nullptr;
      }
    }
    use = &it->second;
    if (slot != nullptr) {
      slot->stem.assign(stem);
      slot->use = use;
    }
  }
  auto& u = *use;
  // A bare stem is free unless it was used; "stem.N" is free when N is
  // past every suffix in use.
  const bool bare = stem.size() == base.size();
  if (bare ? !u.bare : n >= u.next) {
    if (bare) u.bare = true;
    u.next = std::max(u.next, n + 1);
    return std::string(base);
  }
  char digits[24];
  const int64_t k = std::max<int64_t>(u.next, 1);
  auto r = std::to_chars(digits, digits + sizeof(digits), k);
  u.next = k + 1;
  // One allocation at most: the name is written in place.
  const size_t count = static_cast<size_t>(r.ptr - digits);
  std::string name(stem.size() + 1 + count, '.');
  stem.copy(name.data(), stem.size());
  std::copy(digits, r.ptr, name.data() + stem.size() + 1);
  return name;
}

template <typename Names>
void RecordName(Names& names, std::string_view name) {
  auto [stem, n] = SplitSuffix(name);
  auto it = names.find(absl::string_view(stem.data(), stem.size()));
  if (it == names.end()) {
    it = names.emplace(std::string(stem), typename Names::mapped_type()).first;
  }
  if (stem.size() == name.size()) it->second.bare = true;
  it->second.next = std::max(it->second.next, n + 1);
}

}  // namespace

Module::Module(std::string name) : name_(std::move(name)) {}
Module::~Module() = default;

Computation* Module::AddComputation(std::unique_ptr<Computation> c,
                                    bool is_entry) {
  Computation* raw = c.get();
  raw->parent_ = this;
  if (used_computation_names_)
    RecordName(*used_computation_names_, raw->name());
  for (auto& slot : raw->slots_) {
    if (slot && slot->unique_id_ < 0) slot->unique_id_ = NextUniqueId();
    if (slot) next_unique_id_ = std::max(next_unique_id_, slot->unique_id_ + 1);
  }
  computations_.push_back(std::move(c));
  if (is_entry) entry_ = raw;
  ++computations_epoch_;
  return raw;
}

absl::Status Module::RemoveComputation(Computation* c) {
  if (c == entry_) {
    return absl::FailedPreconditionError(
        StrCat("cannot remove the entry computation '", c->name(), "'"));
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& p) { return p.get() == c; });
  if (it == computations_.end()) {
    return absl::NotFoundError(
        StrCat("computation '", c->name(), "' is not in the module"));
  }
  for (const auto& comp : computations_) {
    if (comp.get() == c) continue;
    bool called = false;
    comp->ForEachInstruction([&](Instruction* i) {
      for (Computation* callee : i->called_computations()) {
        if (callee == c) called = true;
      }
    });
    if (called) {
      return absl::FailedPreconditionError(StrCat("cannot remove '", c->name(),
                                                  "': computation '",
                                                  comp->name(), "' calls it"));
    }
  }
  computations_.erase(it);
  ++computations_epoch_;
  return absl::OkStatus();
}

int64_t Module::RemoveComputationsIfUncalled(
    const absl::flat_hash_set<const Computation*>& candidates) {
  return RemoveComputationsIfUncalled(candidates,
                                      [](const Computation*) { return true; });
}

int64_t Module::RemoveComputationsIfUncalled(
    const absl::flat_hash_set<const Computation*>& candidates,
    absl::FunctionRef<bool(const Computation*)> may_call) {
  if (candidates.empty()) return 0;
  // Call sites of each candidate still in the module, counted in one scan;
  // removing a candidate uncounts its own calls, which can free more.
  absl::flat_hash_map<const Computation*, int64_t> calls;
  for (const auto& c : computations_) {
    if (c.get() != entry_ && candidates.contains(c.get())) {
      calls.try_emplace(c.get(), 0);
    }
  }
  if (calls.empty()) return 0;
  for (const auto& c : computations_) {
    if (!may_call(c.get())) continue;
    c->ForEachInstruction([&](Instruction* i) {
      for (Computation* callee : i->called_computations()) {
        auto it = calls.find(callee);
        if (it != calls.end()) ++it->second;
      }
    });
  }
  std::vector<const Computation*> stack;
  for (const auto& [c, n] : calls) {
    if (n == 0) stack.push_back(c);
  }
  absl::flat_hash_set<const Computation*> doomed;
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    doomed.insert(c);
    c->ForEachInstruction([&](Instruction* i) {
      for (Computation* callee : i->called_computations()) {
        auto it = calls.find(callee);
        if (it != calls.end() && --it->second == 0) stack.push_back(callee);
      }
    });
  }
  if (doomed.empty()) return 0;
  const size_t before = computations_.size();
  std::erase_if(computations_,
                [&](const auto& p) { return doomed.contains(p.get()); });
  ++computations_epoch_;
  return static_cast<int64_t>(before - computations_.size());
}

int64_t Module::RemoveUnusedComputations() {
  if (entry_ == nullptr) return 0;
  absl::flat_hash_set<const Computation*> live = {entry_};
  std::vector<const Computation*> stack = {entry_};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    c->ForEachInstruction([&](Instruction* i) {
      for (Computation* callee : i->called_computations()) {
        if (live.insert(callee).second) stack.push_back(callee);
      }
    });
  }
  const size_t before = computations_.size();
  std::erase_if(computations_,
                [&](const auto& p) { return !live.contains(p.get()); });
  ++computations_epoch_;
  return static_cast<int64_t>(before - computations_.size());
}

Computation* Module::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

bool Module::ComputationOrderMemoValid() const {
  const ComputationOrderMemo& memo = computation_order_memo_;
  if (memo.epoch != computations_epoch_ ||
      memo.versions.size() != computations_.size()) {
    return false;
  }
  for (size_t k = 0; k < computations_.size(); ++k) {
    if (computations_[k]->version() != memo.versions[k]) return false;
  }
  return true;
}

std::vector<Computation*> Module::MakeComputationPostOrder() const {
  if (ComputationOrderMemoValid()) return computation_order_memo_.order;
  std::vector<Computation*> order;
  order.reserve(computations_.size());
  for (const auto& c : computations_) c->scratch = 0;
  // A computation's callees are walked in place (instruction by
  // instruction, each one's callees in order): rollouts redo this order
  // after every change, and a callee list per computation cost an
  // allocation each.
  struct Frame {
    Computation* c;
    size_t slot = 0;
    size_t callee = 0;
  };
  auto next_callee = [](Frame& f) -> Computation* {
    const auto& slots = f.c->slots_;
    for (; f.slot < slots.size(); ++f.slot, f.callee = 0) {
      if (slots[f.slot] == nullptr) continue;
      const auto& callees = slots[f.slot]->called_computations();
      if (f.callee < callees.size()) return callees[f.callee++];
    }
    return nullptr;
  };
  absl::InlinedVector<Frame, 16> stack;
  auto visit = [&](Computation* start) {
    if (start->scratch != 0) return;
    start->scratch = 1;
    stack.push_back({start});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (Computation* next = next_callee(f)) {
        if (next->scratch == 0) {
          next->scratch = 1;
          stack.push_back({next});
        }
        continue;
      }
      f.c->scratch = 2;
      order.push_back(f.c);
      stack.pop_back();
    }
  };
  for (const auto& c : computations_) {
    if (c.get() != entry_) visit(c.get());
  }
  if (entry_) visit(entry_);
  ComputationOrderMemo& memo = computation_order_memo_;
  memo.epoch = computations_epoch_;
  memo.order = order;
  memo.versions.resize(computations_.size());
  for (size_t k = 0; k < computations_.size(); ++k) {
    memo.versions[k] = computations_[k]->version();
  }
  return order;
}

int64_t Module::instruction_count() const {
  int64_t n = 0;
  for (const auto& c : computations_) n += c->instruction_count();
  return n;
}

std::string Module::UniqueInstructionName(std::string_view base) {
  if (!used_names_) {
    used_names_ = std::make_unique<InstructionNames>();
    for (const auto& c : computations_) {
      c->ForEachInstruction(
          [&](Instruction* i) { RecordName(*used_names_, i->name()); });
    }
  }
  return UniqueName(*used_names_, base, &stem_cache_);
}

std::string Module::UniqueComputationName(std::string_view base) {
  // Built once: thousands of fusions each add a computation.
  if (!used_computation_names_) {
    used_computation_names_ = std::make_unique<InstructionNames>();
    for (const auto& c : computations_) {
      RecordName(*used_computation_names_, c->name());
    }
  }
  return UniqueName(*used_computation_names_, base,
                    static_cast<std::array<StemCacheEntry, 1>*>(nullptr));
}

std::unique_ptr<Module> Module::Clone() const {
  auto m = std::make_unique<Module>(name_);
  m->config_ = config_;
  m->next_unique_id_ = next_unique_id_;
  if (used_names_) {
    m->used_names_ = std::make_unique<InstructionNames>(*used_names_);
  }
  std::vector<Computation*> fresh;
  fresh.reserve(computations_.size());
  // Each computation's clone, found by the original's address (sorted):
  // cloning only reads this module, so threads may fork it at once.
  absl::InlinedVector<std::pair<const Computation*, Computation*>, 32> by_old;
  by_old.reserve(computations_.size());
  for (const auto& c : computations_) {
    auto nc = c->Clone();
    nc->parent_ = m.get();
    Computation* raw = nc.get();
    m->computations_.push_back(std::move(nc));
    if (c.get() == entry_) m->entry_ = raw;
    fresh.push_back(raw);
    by_old.push_back({c.get(), raw});
  }
  std::sort(by_old.begin(), by_old.end());
  auto clone_of = [&](const Computation* old) -> Computation* {
    auto it = std::lower_bound(
        by_old.begin(), by_old.end(), old,
        [](const auto& e, const Computation* k) { return e.first < k; });
    // A callee outside the module (invalid IR) is left as it was.
    return it != by_old.end() && it->first == old
               ? it->second
               : const_cast<Computation*>(old);
  };
  // Point called computations at the clones (and a copied hash memo's
  // callees: a memo is only copied while valid, so they are the
  // instructions' callees, in this module).
  for (Computation* c : fresh) {
    c->ForEachInstruction([&](Instruction* i) {
      for (auto& callee : i->called_computations_) callee = clone_of(callee);
    });
    for (auto& [callee, hash] : c->hash_memo_.callees) {
      callee = clone_of(callee);
    }
  }
  if (ComputationOrderMemoValid()) {
    ComputationOrderMemo& memo = m->computation_order_memo_;
    memo.epoch = m->computations_epoch_;
    memo.order.reserve(computation_order_memo_.order.size());
    for (const Computation* c : computation_order_memo_.order) {
      memo.order.push_back(clone_of(c));
    }
    memo.versions.resize(fresh.size());
    for (size_t k = 0; k < fresh.size(); ++k) {
      memo.versions[k] = fresh[k]->version_;
    }
  }
  // A copied pass memo holds if it holds here: its callees are then
  // computations of this module, whose clones have versions of their own.
  for (size_t i = 0; i < computations_.size(); ++i) {
    Computation::PassMemo& memo = fresh[i]->pass_memo_;
    if (memo.version == Computation::HashMemo::kInvalid) continue;
    if (!computations_[i]->PassMemoValid()) {
      memo = Computation::PassMemo();
      continue;
    }
    for (auto& [callee, version] : memo.callees) {
      callee = clone_of(callee);
      version = callee->version_;
    }
  }
  return m;
}

absl::flat_hash_map<const Computation*, std::vector<Instruction*>>
Module::Callers() const {
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers;
  for (const auto& c : computations_) {
    c->ForEachInstruction([&](Instruction* i) {
      for (Computation* callee : i->called_computations()) {
        callers[callee].push_back(i);
      }
    });
  }
  return callers;
}

}  // namespace hlogym
