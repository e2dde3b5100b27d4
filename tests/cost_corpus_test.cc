// Properties of the cost model over the shared corpus.
//
//  * Every valid module is costed on every built-in device, and the total
//    time, flops and bytes equal the sums over the kernels.
//  * Fusing a producer into its only consumer never increases the modelled
//    bytes: for each cheap producer P (elementwise or data movement) whose
//    only user C is a kernel, a fusion of P into C (a new fusion, or P
//    merged into C's fused computation) accesses no more bytes than P and
//    C apart. Bytes are those of the GPU cost analysis with each input
//    element read once (DRAM traffic).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hlogym/cost/evaluator.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "tests/corpus_util.h"

namespace hlogym {
namespace {

struct Parsed {
  std::string file;
  std::unique_ptr<Module> module;
};

class CostCorpusTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string shared = SharedDir();
    if (shared.empty()) return;
    available_ = true;
    for (const char* folder : {"hloenv", "models", "xla"}) {
      for (const CorpusEntry& e : LoadManifest(shared, folder)) {
        if (e.expect_error) continue;
        auto m = ParseModuleFile(e.path);
        if (!m.ok() || !VerifyModule(**m).ok()) continue;
        modules_->push_back({StrCat(folder, "/", e.file), std::move(*m)});
      }
    }
  }
  static void TearDownTestSuite() { modules_->clear(); }

  void SetUp() override {
    if (!available_) GTEST_SKIP() << "../shared not found: corpus skipped";
  }

  static bool available_;
  static std::vector<Parsed>* modules_;
};

bool CostCorpusTest::available_ = false;
std::vector<Parsed>* CostCorpusTest::modules_ = new std::vector<Parsed>();

bool Near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

TEST_F(CostCorpusTest, TotalsAreSumsOfKernels) {
  ASSERT_GT(modules_->size(), 1000u);
  std::map<std::string, int64_t> errors;
  int64_t costed = 0, kernels = 0, flagged = 0;
  for (const std::string& device : BuiltinDeviceNames()) {
    absl::StatusOr<GpuDevice> d = LoadDevice(device);
    ASSERT_TRUE(d.ok()) << d.status();
    ModelEvaluator ev(*d, {.per_kernel = true});
    for (const Parsed& p : *modules_) {
      absl::StatusOr<EvaluationResult> r = ev.Evaluate(*p.module);
      if (!r.ok()) {
        ++errors[std::string(r.status().message())];
        ADD_FAILURE() << p.file << " on " << device << ": " << r.status();
        continue;
      }
      ++costed;
      kernels += r->kernel_count;
      flagged += !r->flags.empty();
      double seconds = 0, flops = 0, bytes = 0;
      int64_t launches = 0;
      for (const KernelCost& k : r->kernels) {
        EXPECT_TRUE(std::isfinite(k.seconds) && k.seconds > 0)
            << p.file << " " << k.name;
        EXPECT_GE(k.flops, 0) << p.file << " " << k.name;
        EXPECT_GE(k.bytes, 0) << p.file << " " << k.name;
        seconds += k.seconds;
        flops += k.flops;
        bytes += k.bytes;
        launches += k.launches;
      }
      EXPECT_EQ(r->kernel_count, static_cast<int64_t>(r->kernels.size()))
          << p.file;
      EXPECT_TRUE(Near(r->total_seconds, seconds))
          << p.file << ": " << r->total_seconds << " vs " << seconds;
      EXPECT_TRUE(Near(r->flops, flops)) << p.file;
      EXPECT_TRUE(Near(r->bytes_accessed, bytes)) << p.file;
      EXPECT_EQ(r->kernel_launches, launches) << p.file;
    }
  }
  std::cout << "[ COST     ] " << modules_->size() << " modules x "
            << BuiltinDeviceNames().size() << " devices: " << costed
            << " costed, " << kernels << " kernels, " << flagged
            << " results with flags\n";
}

// ---------------------------------------------------------------------------
// Fusing a producer into its consumer, in a scratch module whose entry
// parameters stand for the fusion's operands.

bool IsCheapProducer(const Instruction& p) {
  if (p.opcode() == Opcode::kFusion || !p.shape().IsArray()) return false;
  if (IsElementwiseForCost(p)) return true;
  switch (p.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kIota:
    case Opcode::kGather:
      return true;
    default:
      return false;
  }
}

bool IsFusibleConsumer(const Instruction& c) {
  if (!c.shape().IsArray()) return false;
  if (GpuPerformanceModel::IsLibraryCall(c)) return false;
  switch (c.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kAlternatives:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kSort:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return false;
    default:
      break;
  }
  if (IsCollective(c.opcode()) || IsAsyncStartOpcode(c.opcode()) ||
      IsAsyncDoneOpcode(c.opcode())) {
    return false;
  }
  if (c.opcode() == Opcode::kFusion) {
    const Computation* f = c.fused_computation();
    if (f == nullptr || c.fusion_kind() == FusionKind::kCustom) return false;
    // Multi-output fusions are left out (their outputs are tuples anyway).
    return f->num_parameters() == c.operand_count();
  }
  return true;
}

class FusionBuilder {
 public:
  FusionBuilder()
      : module_(std::make_unique<Module>("scratch")),
        entry_(std::make_unique<Computation>("entry")),
        fused_(std::make_unique<Computation>("fused")) {
    fused_->set_is_fusion_computation(true);
  }

  // Parameter of the fused computation for an outside value (one each).
  Instruction* Param(const Instruction* outside) {
    for (size_t i = 0; i < outside_.size(); ++i) {
      if (outside_[i] == outside) return params_[i];
    }
    auto p =
        std::make_unique<Instruction>(Opcode::kParameter, outside->shape());
    p->set_int_attr(static_cast<int64_t>(params_.size()));
    p->set_name(StrCat("param_", params_.size()));
    params_.push_back(fused_->AddInstruction(std::move(p)));
    outside_.push_back(outside);
    return params_.back();
  }

  Instruction* Clone(const Instruction& inst,
                     const std::vector<Instruction*>& operands) {
    std::unique_ptr<Instruction> c = inst.CloneWithNewOperands(operands);
    c->set_name(StrCat(inst.name(), ".f", counter_++));
    return fused_->AddInstruction(std::move(c));
  }

  // Finishes the fusion with `root`; returns the fusion instruction.
  const Instruction* Finish(Instruction* root, const Shape& shape) {
    fused_->set_root_instruction(root);
    Computation* fused = module_->AddComputation(std::move(fused_), false);
    std::vector<Instruction*> args;
    for (size_t i = 0; i < outside_.size(); ++i) {
      auto p = std::make_unique<Instruction>(Opcode::kParameter,
                                             outside_[i]->shape());
      p->set_int_attr(static_cast<int64_t>(i));
      p->set_name(StrCat("arg_", i));
      args.push_back(entry_->AddInstruction(std::move(p)));
    }
    auto f = std::make_unique<Instruction>(Opcode::kFusion, shape);
    for (Instruction* a : args) f->AppendOperand(a);
    f->set_called_computations({fused});
    f->set_fusion_kind(FusionKind::kLoop);
    f->set_name("fusion");
    Instruction* fusion = entry_->AddInstruction(std::move(f));
    entry_->set_root_instruction(fusion);
    module_->AddComputation(std::move(entry_), true);
    return fusion;
  }

 private:
  std::unique_ptr<Module> module_;
  std::unique_ptr<Computation> entry_;
  std::unique_ptr<Computation> fused_;
  std::vector<Instruction*> params_;
  std::vector<const Instruction*> outside_;
  int counter_ = 0;
};

// Builds P fused into C and returns the fusion's bytes accessed.
absl::StatusOr<double> FusedBytes(const Instruction& p, const Instruction& c,
                                  const CostAnalysis& analysis) {
  FusionBuilder b;
  std::vector<Instruction*> p_operands;
  for (const Instruction* o : p.operands()) p_operands.push_back(b.Param(o));
  Instruction* p_clone = b.Clone(p, p_operands);
  Instruction* root = nullptr;
  if (c.opcode() == Opcode::kFusion) {
    // Copy C's fused computation, P's clone standing in for the
    // parameters that read P.
    const Computation* f = c.fused_computation();
    std::map<const Instruction*, Instruction*> map;
    for (const Instruction* inst : f->MakeInstructionPostOrder()) {
      if (inst->opcode() == Opcode::kParameter) {
        const Instruction* outside = c.operand(inst->parameter_number());
        map[inst] = outside == &p ? p_clone : b.Param(outside);
        continue;
      }
      std::vector<Instruction*> ops;
      for (const Instruction* o : inst->operands()) ops.push_back(map.at(o));
      map[inst] = b.Clone(*inst, ops);
    }
    root = map.at(f->root_instruction());
  } else {
    std::vector<Instruction*> c_operands;
    for (const Instruction* o : c.operands()) {
      c_operands.push_back(o == &p ? p_clone : b.Param(o));
    }
    root = b.Clone(c, c_operands);
  }
  const Instruction* fusion = b.Finish(root, c.shape());
  absl::StatusOr<CostProperties> props = analysis.Analyze(*fusion);
  if (!props.ok()) return props.status();
  return props->bytes_accessed;
}

TEST_F(CostCorpusTest, FusingAProducerIntoItsOnlyConsumerNeverIncreasesBytes) {
  absl::StatusOr<GpuDevice> d = LoadDevice("h100");
  ASSERT_TRUE(d.ok());
  const CostAnalysis analysis(
      CostAnalysisOptions::Gpu(*d, /*count_multiple_input_accesses=*/false));
  constexpr int kMaxPairsPerModule = 200;
  int64_t pairs = 0, into_fusions = 0, modules_with_pairs = 0, fewer = 0;
  for (const Parsed& parsed : *modules_) {
    int in_module = 0;
    for (const Computation* comp : parsed.module->MakeComputationPostOrder()) {
      if (comp->IsFusionComputation()) continue;
      for (const Instruction* p : comp->MakeInstructionPostOrder()) {
        if (in_module >= kMaxPairsPerModule) break;
        if (!IsCheapProducer(*p) || p->user_count() != 1 || p->IsRoot()) {
          continue;
        }
        const Instruction* c = p->users()[0];
        if (!IsFusibleConsumer(*c)) continue;
        absl::StatusOr<CostProperties> pp = analysis.Analyze(*p);
        absl::StatusOr<CostProperties> cp = analysis.Analyze(*c);
        ASSERT_TRUE(pp.ok() && cp.ok()) << parsed.file << " " << p->name();
        // Bitcasts (transposes that move no data) cost nothing unfused;
        // there is nothing to fuse.
        if (pp->bytes_accessed == 0 || cp->bytes_accessed == 0) continue;
        absl::StatusOr<double> fused = FusedBytes(*p, *c, analysis);
        ASSERT_TRUE(fused.ok())
            << parsed.file << " " << p->name() << ": " << fused.status();
        const double unfused = pp->bytes_accessed + cp->bytes_accessed;
        EXPECT_LE(*fused, unfused)
            << parsed.file << ": fusing " << p->name() << " ("
            << OpcodeName(p->opcode()) << ") into " << c->name() << " ("
            << OpcodeName(c->opcode()) << "): producer " << pp->bytes_accessed
            << " bytes, consumer " << cp->bytes_accessed << " bytes";
        ++pairs;
        ++in_module;
        into_fusions += c->opcode() == Opcode::kFusion;
        fewer += *fused < unfused;
      }
    }
    modules_with_pairs += in_module > 0;
  }
  EXPECT_GT(pairs, 1000);
  EXPECT_GT(into_fusions, 50);
  std::cout << "[ COST     ] " << pairs << " producer-consumer pairs in "
            << modules_with_pairs << " modules (" << into_fusions
            << " into existing fusions); " << fewer
            << " fusions access strictly fewer bytes\n";
}

}  // namespace
}  // namespace hlogym
