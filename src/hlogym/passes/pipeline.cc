#include "hlogym/passes/pipeline.h"

#include <optional>

#include "absl/hash/hash.h"
#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/passes/alternative_graph.h"

namespace hlogym {
namespace {

absl::Status VerifyAfter(const Module& module, std::string_view pass) {
  absl::Status s = VerifyModule(module);
  if (s.ok()) return s;
  return absl::InternalError(
      StrCat("module does not verify after pass '", pass, "': ", s.message()));
}

}  // namespace

Pipeline::Pipeline(std::string name) : name_(std::move(name)) {
#ifdef NDEBUG
  verify_ = false;
#else
  verify_ = true;
#endif
}

Pass* Pipeline::AddPass(std::unique_ptr<Pass> pass, bool dry) {
  Pass* raw = pass.get();
  entries_.push_back({std::move(pass), dry, true});
  return raw;
}

absl::StatusOr<Pass*> Pipeline::AddPass(std::string_view registered_name,
                                        bool dry) {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass,
                          PassRegistry::Global().Create(registered_name));
  return AddPass(std::move(pass), dry);
}

Pipeline* Pipeline::AddPipeline(std::string name) {
  auto p = std::make_unique<Pipeline>(std::move(name));
  p->verify_ = verify_;
  Pipeline* raw = p.get();
  entries_.push_back({std::move(p), false, true});
  return raw;
}

absl::StatusOr<bool> Pipeline::RunWith(Module* module, Rewriter& rw) {
  if (rw.dry()) {
    return absl::InvalidArgumentError(
        StrCat("pipeline '", name_,
               "' cannot run inside a dry run; mark its passes dry instead"));
  }
  bool any = false;
  const int64_t start_size = module->instruction_count();
  for (int64_t it = 0; it < max_iterations_; ++it) {
    if (it > 0 && GrewTooMuch(start_size, module->instruction_count())) break;
    bool changed = false;
    for (Entry& e : entries_) {
      if (!e.enabled) continue;
      HLOGYM_ASSIGN_OR_RETURN(bool c, e.pass->Run(module));
      if (verify_) HLOGYM_RETURN_IF_ERROR(VerifyAfter(*module, e.pass->name()));
      changed |= c;
    }
    any |= changed;
    if (!changed) break;
  }
  return any;
}

bool Pipeline::Visit(const std::function<bool(Entry&)>& f) {
  bool found = false;
  for (Entry& e : entries_) {
    found |= f(e);
    if (auto* sub = dynamic_cast<Pipeline*>(e.pass.get())) {
      found |= sub->Visit(f);
    }
  }
  return found;
}

void Pipeline::ForEachPass(const std::function<void(Pass*)>& f) {
  Visit([&](Entry& e) {
    f(e.pass.get());
    return false;
  });
}

namespace {

std::string KnownNames(Pipeline& p) {
  std::string names;
  p.ForEachPass([&](Pass* pass) {
    if (!names.empty()) names += ", ";
    names += std::string(pass->name());
  });
  return names;
}

}  // namespace

absl::Status Pipeline::SetEnabled(std::string_view name, bool enabled) {
  bool found = Visit([&](Entry& e) {
    if (e.pass->name() != name) return false;
    e.enabled = enabled;
    return true;
  });
  if (found) return absl::OkStatus();
  return absl::NotFoundError(StrCat("pipeline '", name_, "' has no pass '",
                                    name, "' (it has: ", KnownNames(*this),
                                    ")"));
}

absl::Status Pipeline::SetDry(std::string_view name, bool dry) {
  bool found = Visit([&](Entry& e) {
    if (e.pass->name() != name) return false;
    e.dry = dry;
    return true;
  });
  if (found) return absl::OkStatus();
  return absl::NotFoundError(StrCat("pipeline '", name_, "' has no pass '",
                                    name, "' (it has: ", KnownNames(*this),
                                    ")"));
}

absl::Status Pipeline::MoveBefore(std::string_view name,
                                  std::string_view before) {
  auto find = [&](std::string_view n) -> int64_t {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].pass->name() == n) return static_cast<int64_t>(i);
    }
    return -1;
  };
  int64_t from = find(name);
  int64_t to = find(before);
  if (from < 0 || to < 0) {
    for (Entry& e : entries_) {
      if (auto* sub = dynamic_cast<Pipeline*>(e.pass.get())) {
        if (sub->MoveBefore(name, before).ok()) return absl::OkStatus();
      }
    }
    return absl::NotFoundError(
        StrCat("pipeline '", name_, "' has no pass '", from < 0 ? name : before,
               "' at the same level as '", from < 0 ? before : name, "'"));
  }
  if (from == to) return absl::OkStatus();
  Entry moved = std::move(entries_[from]);
  entries_.erase(entries_.begin() + from);
  if (from < to) --to;
  entries_.insert(entries_.begin() + to, std::move(moved));
  return absl::OkStatus();
}

void Pipeline::DescribeTo(int depth, std::string* out) const {
  for (const Entry& e : entries_) {
    out->append(static_cast<size_t>(depth) * 2, ' ');
    StrAppend(out, e.pass->name());
    if (e.dry) StrAppend(out, " [dry]");
    if (!e.enabled) StrAppend(out, " [disabled]");
    auto* sub = dynamic_cast<const Pipeline*>(e.pass.get());
    if (sub != nullptr && sub->max_iterations_ > 1) {
      StrAppend(out, " (fixpoint, at most ", sub->max_iterations_, ")");
    }
    out->push_back('\n');
    if (sub != nullptr) sub->DescribeTo(depth + 1, out);
  }
}

std::string Pipeline::Describe() const {
  std::string out;
  StrAppend(&out, name_);
  if (max_iterations_ > 1) {
    StrAppend(&out, " (fixpoint, at most ", max_iterations_, ")");
  }
  out.push_back('\n');
  DescribeTo(1, &out);
  return out;
}

PipelineRunner::PipelineRunner(Pipeline* pipeline, Module* module)
    : pipeline_(pipeline), module_(module) {}

PipelineRunner::PipelineRunner(const PipelineRunner& other, Module* module)
    : PipelineRunner(other) {
  module_ = module;
}

absl::StatusOr<std::unique_ptr<PipelineRunner>> PipelineRunner::Remap(
    const PipelineRunner& other, Module* module, Pipeline* pipeline) {
  auto r = std::make_unique<PipelineRunner>(other, module);
  r->pipeline_ = pipeline;
  // Frame k+1 runs the sub-pipeline entry that frame k is at.
  Pipeline* at = pipeline;
  for (size_t k = 0; k < r->frames_.size(); ++k) {
    const Pipeline* old = other.frames_[k].pipeline;
    if (at == nullptr || at->entries_.size() != old->entries_.size() ||
        at->name_ != old->name_) {
      return absl::InvalidArgumentError(
          StrCat("pipeline '", pipeline->name(),
                 "' does not have the structure of the running pipeline '",
                 other.pipeline_->name(), "'"));
    }
    r->frames_[k].pipeline = at;
    const size_t next = r->frames_[k].next;
    at = next > 0 && next <= at->entries_.size()
             ? dynamic_cast<Pipeline*>(at->entries_[next - 1].pass.get())
             : nullptr;
  }
  return r;
}

uint64_t PipelineRunner::PositionHash() const {
  uint64_t h = absl::HashOf(started_, paused_, frames_.size());
  for (const Frame& f : frames_) {
    h = absl::HashOf(h, f.next, f.changed_this_iteration, f.changed,
                     f.start_hash);
  }
  return h;
}

absl::StatusOr<PipelineRunner::State> PipelineRunner::Run() {
  if (!started_) {
    started_ = true;
    PushFrame(pipeline_);
  }
  // The DagHash of the module as it stands, while no pass has changed it
  // since it was computed (each dry pass needs the hash before it: most
  // steps of a decision loop would otherwise hash the module twice).
  std::optional<uint64_t> known_hash;
  if (paused_) {
    if (HasAlternativeNodes(*module_)) {
      return absl::FailedPreconditionError(
          StrCat("the module still has alternatives from '", paused_at_,
                 "': apply decisions before resuming"));
    }
    paused_ = false;
    bool changed;
    if (decisions_reported_) {
      changed = reported_change_.value_or(true);
    } else {
      known_hash = DagHash(*module_);
      changed = *known_hash != hash_before_dry_;
    }
    reported_change_.reset();
    if (changed && !frames_.empty()) {
      frames_.back().changed_this_iteration = true;
    }
    if (pipeline_->verify_) {
      HLOGYM_RETURN_IF_ERROR(VerifyAfter(*module_, paused_at_));
    }
  }
  while (!frames_.empty()) {
    Frame& f = frames_.back();
    const auto& entries = f.pipeline->entries_;
    if (f.next == 0 && f.decision_loop && !f.start_hash) {
      if (!known_hash) known_hash = DagHash(*module_);
      f.start_hash = known_hash;
    }
    if (f.next < entries.size()) {
      const Pipeline::Entry& e = entries[f.next++];
      if (!e.enabled) continue;
      if (auto* sub = dynamic_cast<Pipeline*>(e.pass.get())) {
        PushFrame(sub);
        continue;
      }
      // Skipping is exact unless fusions have unused parameters, which the
      // decisions' pruning would drop: then the pass runs (below).
      if (e.dry && keep_originals_ && !HasUnusedFusionParameters(*module_)) {
        ++dry_passes_kept_;
        continue;
      }
      ++passes_run_;
      if (e.dry) {
        if (!decisions_reported_) {
          hash_before_dry_ = known_hash ? *known_hash : DagHash(*module_);
          // A dry run that offers nothing leaves the module as it was.
          known_hash = hash_before_dry_;
        }
        reported_change_.reset();
        HLOGYM_ASSIGN_OR_RETURN(last_augment_, e.pass->RunDry(module_));
        if (last_augment_.alternatives > 0 && keep_originals_) {
          // Decided here, as a caller keeping every original would.
          ++dry_passes_kept_;
          const std::vector<Instruction*> nodes = AlternativeNodes(*module_);
          const std::vector<int64_t> zeros(nodes.size(), 0);
          HLOGYM_ASSIGN_OR_RETURN(ApplyStats applied,
                                  ApplyDecisions(module_, zeros, nodes));
          if (applied.changed) f.changed_this_iteration = true;
          known_hash.reset();
          continue;
        }
        if (last_augment_.alternatives > 0) {
          paused_ = true;
          hash_before_pause_ = known_hash;
          paused_at_ = std::string(e.pass->name());
          return State::kPaused;
        }
        continue;
      }
      HLOGYM_ASSIGN_OR_RETURN(bool changed, e.pass->Run(module_));
      if (pipeline_->verify_) {
        HLOGYM_RETURN_IF_ERROR(VerifyAfter(*module_, e.pass->name()));
      }
      if (changed) known_hash.reset();
      f.changed_this_iteration |= changed;
      continue;
    }
    // End of one iteration of this pipeline.
    f.changed |= f.changed_this_iteration;
    ++f.iteration;
    bool repeat =
        f.changed_this_iteration && f.iteration < f.pipeline->max_iterations_;
    if (repeat && GrewTooMuch(f.start_size, module_->instruction_count())) {
      repeat = false;
      ++growth_stops_;
    }
    if (repeat && f.decision_loop) {
      if (!known_hash) known_hash = DagHash(*module_);
      repeat = *known_hash != f.start_hash;
      f.start_hash = known_hash;
    }
    if (repeat) {
      f.next = 0;
      f.changed_this_iteration = false;
      continue;
    }
    bool changed = f.changed;
    frames_.pop_back();
    if (!frames_.empty()) frames_.back().changed_this_iteration |= changed;
  }
  return State::kDone;
}

}  // namespace hlogym
