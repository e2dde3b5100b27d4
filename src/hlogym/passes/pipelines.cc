#include "hlogym/passes/pipelines.h"

#include <initializer_list>
#include <utility>

#include "hlogym/ir/status_macros.h"
#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

absl::Status AddAll(Pipeline* p,
                    std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    HLOGYM_RETURN_IF_ERROR(p->AddPass(n).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Pipeline*> Fix(Pipeline* parent, std::string name,
                              std::initializer_list<std::string_view> names) {
  Pipeline* p = parent->AddPipeline(std::move(name));
  p->set_max_iterations(Pipeline::kUntilUnchanged);
  HLOGYM_RETURN_IF_ERROR(AddAll(p, names));
  return p;
}

absl::StatusOr<Pass*> AddWithOption(Pipeline* p, std::string_view pass,
                                    std::string_view key,
                                    std::string_view value, bool dry = false) {
  HLOGYM_ASSIGN_OR_RETURN(Pass * added, p->AddPass(pass, dry));
  HLOGYM_RETURN_IF_ERROR(added->SetOption(key, value));
  return added;
}

// Stages 1-9 of XLA's GPU pipeline (everything before fusion), with the
// passes HloGym has, in XLA's order.
absl::Status AddPreFusionStages(Pipeline* root) {
  Pipeline* pre_spmd = root->AddPipeline("pre-spmd");
  HLOGYM_RETURN_IF_ERROR(
      AddAll(pre_spmd, {"call-inliner", "zero-sized-hlo-elimination"}));
  // Single device: the sharding remover is a no-op here; DCE follows it.
  Pipeline* spmd = root->AddPipeline("spmd");
  HLOGYM_RETURN_IF_ERROR(AddAll(spmd, {"hlo-dce"}));

  Pipeline* opt = root->AddPipeline("optimization");
  HLOGYM_RETURN_IF_ERROR(AddAll(
      opt,
      {"dot-decomposer", "comparison-expander", "zero-sized-hlo-elimination",
       "call-inliner", "batchnorm-expander", "logistic-expander"}));
  HLOGYM_RETURN_IF_ERROR(
      Fix(opt, "simplification",
          {"zero-sized-hlo-elimination", "algebraic-simplifier",
           "sort-simplifier", "tuple-simplifier", "while-loop-constant-sinking",
           "while-loop-simplifier", "slice-sinker", "reshape-mover",
           "hlo-constant-folding", "conditional-simplifier",
           "transpose-folding", "hlo-cse", "hlo-dce"})
          .status());
  HLOGYM_RETURN_IF_ERROR(
      Fix(opt, "simplification-2", {"algebraic-simplifier"}).status());

  Pipeline* collectives = root->AddPipeline("collective-optimizations");
  HLOGYM_RETURN_IF_ERROR(
      AddAll(collectives, {"hlo-dce", "algebraic-simplifier", "hlo-dce",
                           "while-loop-trip-count-annotator"}));

  Pipeline* conv = root->AddPipeline("convolution-canonicalization");
  HLOGYM_RETURN_IF_ERROR(
      AddAll(conv, {"conv-rewriter", "call-inliner", "tuple-simplifier"}));
  HLOGYM_RETURN_IF_ERROR(
      Fix(conv, "conv-simplify", {"algebraic-simplifier"}).status());
  HLOGYM_RETURN_IF_ERROR(
      Fix(conv, "conv-reshape-mover", {"reshape-mover", "algebraic-simplifier"})
          .status());
  HLOGYM_RETURN_IF_ERROR(AddAll(conv, {"hlo-constant-folding"}));

  Pipeline* layout = root->AddPipeline("layout-assignment");
  HLOGYM_RETURN_IF_ERROR(AddAll(layout, {"flatten-call-graph"}));
  HLOGYM_RETURN_IF_ERROR(
      Fix(root, "layout-normalization", {"algebraic-simplifier-ls"}).status());

  Pipeline* post_layout = root->AddPipeline("post-layout-normalization");
  HLOGYM_RETURN_IF_ERROR(
      Fix(post_layout, "post-layout-simplify", {"algebraic-simplifier"})
          .status());
  HLOGYM_RETURN_IF_ERROR(
      AddAll(post_layout, {"transpose-folding", "gemm-rewriter"}));
  HLOGYM_RETURN_IF_ERROR(
      Fix(post_layout, "post-gemm-simplify", {"algebraic-simplifier"})
          .status());

  Pipeline* post_assign = root->AddPipeline("post-layout-assignment");
  HLOGYM_RETURN_IF_ERROR(AddAll(
      post_assign, {"call-inliner", "gemm-rewriter", "tuple-simplifier"}));
  HLOGYM_RETURN_IF_ERROR(
      Fix(post_assign, "post-assignment-simplify", {"algebraic-simplifier"})
          .status());
  HLOGYM_RETURN_IF_ERROR(AddAll(post_assign, {"hlo-cse"}));
  return absl::OkStatus();
}

// Stage 11: horizontal fusion, then DCE of what it left.
absl::Status AddHorizontalStage(Pipeline* root) {
  return Fix(root, "horizontal-fusion",
             {"horizontal-loop-fusion", "horizontal-input-fusion", "hlo-cse",
              "hlo-dce"})
      .status();
}

absl::Status BuildXlaGpu(Pipeline* root) {
  HLOGYM_RETURN_IF_ERROR(AddPreFusionStages(root));
  Pipeline* fusion = root->AddPipeline("fusion");
  HLOGYM_RETURN_IF_ERROR(
      AddAll(fusion, {"variadic-op-splitter", "priority-fusion", "hlo-cse",
                      "hlo-dce", "multi-output-fusion", "hlo-cse", "hlo-dce"}));
  return AddHorizontalStage(root);
}

absl::Status BuildXlaGpuLegacy(Pipeline* root) {
  HLOGYM_RETURN_IF_ERROR(AddPreFusionStages(root));
  Pipeline* fusion = root->AddPipeline("fusion");
  fusion->set_max_iterations(Pipeline::kUntilUnchanged);
  HLOGYM_RETURN_IF_ERROR(AddAll(fusion, {"variadic-op-splitter"}));
  HLOGYM_RETURN_IF_ERROR(
      AddWithOption(fusion, "instruction-fusion", "may_duplicate", "false")
          .status());
  HLOGYM_RETURN_IF_ERROR(
      AddWithOption(fusion, "instruction-fusion", "may_duplicate", "true")
          .status());
  HLOGYM_RETURN_IF_ERROR(AddAll(
      fusion, {"fusion-merger", "multi-output-fusion", "hlo-cse", "hlo-dce"}));
  return AddHorizontalStage(root);
}

absl::Status BuildGeneralFusionWith(Pipeline* root, bool siblings) {
  HLOGYM_RETURN_IF_ERROR(AddPreFusionStages(root));
  Pipeline* loop = root->AddPipeline("general-fusion-loop");
  loop->set_max_iterations(kMaxDecisionRounds);
  HLOGYM_RETURN_IF_ERROR(AddWithOption(loop, "general-fusion", "siblings",
                                       siblings ? "true" : "false",
                                       /*dry=*/true)
                             .status());
  HLOGYM_RETURN_IF_ERROR(AddAll(loop, {"hlo-cse", "hlo-dce"}));
  return AddHorizontalStage(root);
}

absl::Status BuildGeneralFusion(Pipeline* root) {
  return BuildGeneralFusionWith(root, /*siblings=*/true);
}

absl::Status BuildGeneralFusionVertical(Pipeline* root) {
  return BuildGeneralFusionWith(root, /*siblings=*/false);
}

absl::Status BuildSingleFusion(Pipeline* root) {
  HLOGYM_RETURN_IF_ERROR(AddPreFusionStages(root));
  Pipeline* loop = root->AddPipeline("single-fusion-loop");
  loop->set_max_iterations(kMaxDecisionRounds);
  HLOGYM_RETURN_IF_ERROR(AddWithOption(loop, "instruction-fusion",
                                       "may_duplicate", "true", /*dry=*/true)
                             .status());
  HLOGYM_RETURN_IF_ERROR(AddAll(
      loop, {"fusion-merger", "multi-output-fusion", "hlo-cse", "hlo-dce"}));
  return AddHorizontalStage(root);
}

struct Builder {
  NamedPipelineInfo info;
  absl::Status (*build)(Pipeline*);
};

const std::vector<Builder>& Builders() {
  static const auto* builders = new std::vector<Builder>{
      {{"xla-gpu",
        "XLA's GPU optimization pipeline with priority fusion (the "
        "baseline)"},
       BuildXlaGpu},
      {{"xla-gpu-legacy",
        "the same with the legacy fusion stack (instruction fusion, fusion "
        "merger, multi-output fusion)"},
       BuildXlaGpuLegacy},
      {{"general-fusion",
        "pre-fusion passes, then dry general-fusion (producer-consumer and "
        "sibling candidates) + CSE + DCE until no "
        "alternative is left, then horizontal fusion"},
       BuildGeneralFusion},
      {{"general-fusion-vertical",
        "general-fusion offering producer-consumer fusions only (no sibling "
        "candidates): a smaller decision space"},
       BuildGeneralFusionVertical},
      {{"single-fusion",
        "pre-fusion passes, then dry instruction-fusion followed by fusion "
        "merger, multi-output fusion, CSE and DCE, until no alternative is "
        "left, then horizontal fusion"},
       BuildSingleFusion},
  };
  return *builders;
}

}  // namespace

const std::vector<NamedPipelineInfo>& NamedPipelines() {
  static const auto* infos = [] {
    auto* v = new std::vector<NamedPipelineInfo>;
    for (const Builder& b : Builders()) v->push_back(b.info);
    return v;
  }();
  return *infos;
}

absl::StatusOr<std::unique_ptr<Pipeline>> BuildNamedPipeline(
    std::string_view name) {
  for (const Builder& b : Builders()) {
    if (b.info.name != name) continue;
    auto p = std::make_unique<Pipeline>(std::string(name));
    HLOGYM_RETURN_IF_ERROR(b.build(p.get()));
    return p;
  }
  std::string known;
  for (const Builder& b : Builders()) {
    StrAppend(&known, known.empty() ? "" : ", ", b.info.name);
  }
  return absl::NotFoundError(
      StrCat("unknown pipeline '", name, "' (known: ", known, ")"));
}

absl::StatusOr<PipelineRunStats> RunNamedPipeline(Module* module,
                                                  std::string_view name,
                                                  PipelineRunOptions options) {
  HLOGYM_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> pipeline,
                          BuildNamedPipeline(name));
  for (const std::string& d : options.disabled) {
    HLOGYM_RETURN_IF_ERROR(pipeline->SetEnabled(d, false));
  }
  pipeline->ForEachPass([&](Pass* p) {
    if (auto* sub = dynamic_cast<Pipeline*>(p)) sub->set_verify(options.verify);
  });
  pipeline->set_verify(options.verify);
  PipelineRunStats stats;
  PipelineRunner runner(pipeline.get(), module);
  runner.set_decisions_reported(true);
  // Each pause is decided and applied at once, which builds the chosen
  // candidates' bodies: the others are never built.
  DeferFusionBodies defer(module);
  while (true) {
    HLOGYM_ASSIGN_OR_RETURN(PipelineRunner::State state, runner.Run());
    if (state == PipelineRunner::State::kDone) break;
    std::vector<Instruction*> nodes = AlternativeNodes(*module);
    std::vector<int64_t> decisions = options.policy.Decide(nodes);
    HLOGYM_ASSIGN_OR_RETURN(ApplyStats applied,
                            ApplyDecisions(module, decisions, nodes));
    runner.ReportApplied(applied);
    ++stats.decision_rounds;
    stats.alternatives += applied.alternatives;
    stats.non_original += applied.non_original;
  }
  stats.passes_run = runner.passes_run();
  stats.growth_stops = runner.growth_stops();
  return stats;
}

const std::vector<std::string>& MissingXlaGpuPasses() {
  static const auto* missing = new std::vector<std::string>{
      "pre-spmd: CuDnnCustomCallConverter, "
      "ConvertMemoryPlacementToInternalAnnotations, ConditionalCanonicalizer, "
      "TopkDecomposer, TopkRewriter",
      "spmd: ShardingPropagation, the SPMD partitioner, "
      "CollectivePermuteMotion "
      "(single device only)",
      "optimization: BatchedGatherScatterNormalizer, TopKSplitter, "
      "TopkSpecializer, DotDimensionSorter, ResultCaster, OperandUpcaster, "
      "DotOperandConverter, SubByteNormalization, RngExpander, "
      "RngBitGeneratorExpander, SelectAndScatterExpander, GpuScatterExpander, "
      "QrExpander, EighExpander, DynamicIndexSplitter, "
      "StochasticConvertDecomposer, Convolution4DExpander, "
      "ConvolutionPredExpander, DynamicDimensionSimplifier, DynamicPadder, "
      "StableSortExpander, GatherSimplifier, GatherExpander, "
      "ScatterSimplifier, ScatterExpander, ScatterSliceSimplifier, "
      "BitcastDtypesExpander, DotMerger, RealImagExpander, ConvertMover, "
      "HloComputationDeduplicator",
      "collective optimizations: every collective pass (single device)",
      "convolution canonicalization: FloatNormalization, GpusolverRewriter, "
      "ConvPaddingLegalization, CudnnPadForConvolutions, "
      "CudnnVectorizeConvolutions, CudnnSimplifyPadding",
      "layout assignment: GpuLayoutAssignment (modules keep their layouts), "
      "OptimizeInputOutputBufferAlias, HostOffloadLegalize",
      "layout normalization: ReshapeDecomposer, MoveCopyToUsers, "
      "LayoutNormalization, BroadcastCanonicalizer",
      "post-layout normalization: ReduceDecomposer, DotNormalizer, "
      "GemvRewriter, GemmFusion (Triton), GemmBroadcastFoldingRewriter, "
      "TransposeDimensionGrouper, ReductionDegenerateDimRemover, "
      "ReductionLayoutNormalizer, ReductionDimensionGrouper, "
      "ReductionSplitter, TreeReductionRewriter, SoftmaxRewriterTriton",
      "post-layout assignment: float normalization, GEMM and convolution "
      "autotuning, HostOffloader, SimplifyFPConversions",
      "fusion: SortIotaFusion, ConvFusionRewriter",
      "post-fusion: RenameFusions, collective combiners, double buffering, "
      "the post-fusion AlgebraicSimplifier(LS) and scheduling",
  };
  return *missing;
}

}  // namespace hlogym
