// Recursive-descent parser for the HLO text format. Every method returns
// false after recording the first error; the error carries the location of
// the offending token.
#include "hlogym/text/parser.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlogym/ir/shape_inference.h"
#include "hlogym/ir/str_util.h"
#include "hlogym/text/lexer.h"

namespace hlogym {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Collapses whitespace runs outside quoted strings to one space, so raw
// attribute text prints on one line and re-parses to the same text.
std::string NormalizeRaw(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"' || c == '\'') {
      if (space && !out.empty()) out.push_back(' ');
      space = false;
      char q = c;
      out.push_back(c);
      for (++i; i < s.size(); ++i) {
        out.push_back(s[i]);
        if (s[i] == '\\' && i + 1 < s.size()) {
          out.push_back(s[++i]);
        } else if (s[i] == q) {
          break;
        }
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Everything gathered for one instruction before it is created.
struct PendingInstruction {
  Opcode opcode = Opcode::kAdd;
  std::optional<Shape> shape;
  std::vector<Instruction*> operands;
  const char* loc = nullptr;
  std::string name;
  bool is_root = false;
  // Async shorthand: the wrapped opcode and which of start/update/done.
  std::optional<Opcode> wrapped;
  // Inline attributes.
  std::optional<DimVector> dimensions;
  int64_t int_attr = 0;
  bool has_int_attr = false;
  std::optional<ComparisonDirection> direction;
  ComparisonType comparison_type = ComparisonType::kDefault;
  std::optional<FusionKind> fusion_kind;
  std::optional<Literal> literal;
  std::optional<OpMetadata> metadata;
  std::optional<std::string> backend_config;
  std::optional<FrontendAttributes> frontend_attributes;
  std::unique_ptr<InstructionAttrs> attrs_storage;  // created on first use
  bool has_attrs = false;
  InstructionAttrs& attrs() {
    if (!attrs_storage) attrs_storage = std::make_unique<InstructionAttrs>();
    return *attrs_storage;
  }
  const InstructionAttrs& attrs_or_empty() const {
    static const InstructionAttrs* kEmpty = new InstructionAttrs();
    return attrs_storage ? *attrs_storage : *kEmpty;
  }
  std::vector<Instruction*> control_predecessors;
  // Called computations by role.
  Computation* to_apply = nullptr;
  std::vector<Computation*> calls;
  bool has_calls = false;
  Computation* condition = nullptr;
  Computation* body = nullptr;
  Computation* select = nullptr;
  Computation* scatter = nullptr;
  Computation* true_computation = nullptr;
  Computation* false_computation = nullptr;
  std::vector<Computation*> branch_computations;
  bool has_branch_computations = false;
  std::vector<Computation*> called_computations;
  bool has_called_computations = false;
  // Attribute keys written so far (views into the source text).
  struct SeenKeys {
    std::vector<std::string_view> keys;
    bool insert(std::string_view k) {
      if (contains(k)) return false;
      keys.push_back(k);
      return true;
    }
    bool contains(std::string_view k) const {
      return std::find(keys.begin(), keys.end(), k) != keys.end();
    }
  } seen;
};

void FillMissingLayouts(Shape* s) {
  if (s->IsTuple()) {
    for (Shape& e : *s->mutable_tuple_shapes()) FillMissingLayouts(&e);
  } else if (s->IsArray() &&
             (!s->has_layout() ||
              static_cast<int64_t>(s->layout().minor_to_major.size()) !=
                  s->rank())) {
    s->SetDefaultLayout();
  }
}

// Result shapes for instructions written without one, through the shape
// inference rules the verifier uses.
absl::StatusOr<Shape> InferOmittedShape(const PendingInstruction& p) {
  std::vector<const Shape*> shapes;
  for (Instruction* o : p.operands) shapes.push_back(&o->shape());
  const InstructionAttrs& a = p.attrs_or_empty();
  auto need = [&](size_t n) -> absl::Status {
    if (shapes.size() < n) {
      return absl::InvalidArgumentError(
          StrCat("expected at least ", static_cast<int64_t>(n), " operands"));
    }
    return absl::OkStatus();
  };
  const std::vector<int64_t> dims =
      p.dimensions
          ? std::vector<int64_t>(p.dimensions->begin(), p.dimensions->end())
          : std::vector<int64_t>();
  auto program = [](Computation* c) {
    return c ? ComputeProgramShape(*c) : ProgramShape();
  };
  if (absl::Status st = need(1); !st.ok() && p.opcode != Opcode::kConstant)
    return st;
  switch (p.opcode) {
    case Opcode::kPad:
      if (absl::Status st = need(2); !st.ok()) return st;
      return InferPadShape(*shapes[0], *shapes[1], a.padding);
    case Opcode::kTranspose:
      return InferTransposeShape(*shapes[0], dims);
    case Opcode::kReverse:
      return InferReverseShape(*shapes[0], dims);
    case Opcode::kConcatenate:
      if (dims.size() != 1)
        return absl::InvalidArgumentError("needs one dimension");
      return InferConcatenateShape(shapes, dims[0]);
    case Opcode::kDot:
      if (absl::Status st = need(2); !st.ok()) return st;
      return InferDotShape(*shapes[0], *shapes[1],
                           a.dot_dnums.value_or(DotDimensionNumbers()),
                           std::nullopt);
    case Opcode::kRaggedDot:
      if (absl::Status st = need(3); !st.ok()) return st;
      return InferRaggedDotShape(
          *shapes[0], *shapes[1], *shapes[2],
          a.dot_dnums.value_or(DotDimensionNumbers()),
          a.ragged_dnums.value_or(RaggedDotDimensionNumbers()), std::nullopt);
    case Opcode::kConvolution:
      if (absl::Status st = need(2); !st.ok()) return st;
      return InferConvolutionShape(
          *shapes[0], *shapes[1], a.feature_group_count, a.batch_group_count,
          a.window.value_or(Window()),
          a.conv_dnums.value_or(ConvolutionDimensionNumbers()), std::nullopt);
    case Opcode::kReduce:
      return InferReduceShape(shapes, dims, program(p.to_apply));
    case Opcode::kReduceWindow:
      return InferReduceWindowShape(shapes, a.window.value_or(Window()),
                                    program(p.to_apply));
    case Opcode::kSort:
      if (dims.size() != 1)
        return absl::InvalidArgumentError("needs one dimension");
      return InferSortShape(shapes, dims[0], program(p.to_apply));
    case Opcode::kMap:
      return InferMapShape(shapes, program(p.to_apply));
    case Opcode::kGather:
      if (absl::Status st = need(2); !st.ok()) return st;
      return InferGatherShape(*shapes[0], *shapes[1],
                              a.gather_dnums.value_or(GatherDimensionNumbers()),
                              a.gather_slice_sizes);
    case Opcode::kScatter:
      return InferScatterShape(
          shapes, program(p.to_apply),
          a.scatter_dnums.value_or(ScatterDimensionNumbers()));
    case Opcode::kSelectAndScatter:
      if (absl::Status st = need(3); !st.ok()) return st;
      return InferSelectAndScatterShape(*shapes[0], program(p.select),
                                        a.window.value_or(Window()), *shapes[1],
                                        *shapes[2], program(p.scatter));
    case Opcode::kTopK:
      return InferTopKShape(*shapes[0], a.k);
    case Opcode::kFft:
      return InferFftShape(*shapes[0], a.fft_type, a.fft_length);
    case Opcode::kCholesky:
      return InferCholeskyShape(*shapes[0]);
    case Opcode::kTriangularSolve:
      if (absl::Status st = need(2); !st.ok()) return st;
      return InferTriangularSolveShape(*shapes[0], *shapes[1], a.left_side);
    case Opcode::kGetDimensionSize:
      if (dims.size() != 1)
        return absl::InvalidArgumentError("needs one dimension");
      return InferGetDimensionSizeShape(*shapes[0], dims[0]);
    case Opcode::kSetDimensionSize:
      if (dims.size() != 1 || shapes.size() < 2) {
        return absl::InvalidArgumentError(
            "needs one dimension and two operands");
      }
      return InferSetDimensionSizeShape(*shapes[0], *shapes[1], dims[0]);
    case Opcode::kBatchNormTraining:
      if (absl::Status st = need(3); !st.ok()) return st;
      return InferBatchNormTrainingShape(*shapes[0], *shapes[1], *shapes[2],
                                         a.feature_index);
    case Opcode::kBatchNormInference:
      if (absl::Status st = need(5); !st.ok()) return st;
      return InferBatchNormInferenceShape(*shapes[0], *shapes[1], *shapes[2],
                                          *shapes[3], *shapes[4],
                                          a.feature_index);
    case Opcode::kBatchNormGrad:
      if (absl::Status st = need(5); !st.ok()) return st;
      return InferBatchNormGradShape(*shapes[0], *shapes[1], *shapes[2],
                                     *shapes[3], *shapes[4], a.feature_index);
    case Opcode::kAddDependency:
      return *shapes[0];
    case Opcode::kDomain:
      return *shapes[0];
    default:
      return absl::InvalidArgumentError("write the result shape explicitly");
  }
}

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : text_(text), lexer_(text), options_(options), loc_pos_(text.data()) {
    Advance();
  }

  absl::StatusOr<std::unique_ptr<Module>> Run();
  bool ParseShapeOnly(Shape* shape) {
    if (!ParseShape(shape)) return false;
    if (tok_.kind != Tok::kEof) return Error("unexpected text after shape");
    return true;
  }
  absl::Status status() const { return status_; }

 private:
  // ---- Tokens and errors.
  void Advance() { lexer_.Next(&tok_); }
  // Line and column of `p`, advancing a cursor so that locating every
  // instruction of a file stays linear.
  void Locate(const char* p, int* line, int* col) {
    if (p < loc_pos_) {
      loc_pos_ = text_.data();
      loc_line_ = 1;
      loc_col_ = 1;
    }
    for (; loc_pos_ < p; ++loc_pos_) {
      if (*loc_pos_ == '\n') {
        ++loc_line_;
        loc_col_ = 1;
      } else {
        ++loc_col_;
      }
    }
    *line = loc_line_;
    *col = loc_col_;
  }
  bool Error(const char* at, std::string_view msg) {
    if (status_.ok()) {
      int line, col;
      LineAndColumn(text_, at, &line, &col);
      status_ = absl::InvalidArgumentError(
          StrCat(options_.filename, ":", line, ":", col, ": ", msg));
    }
    return false;
  }
  bool Error(std::string_view msg) {
    if (tok_.kind == Tok::kError && status_.ok()) {
      return Error(tok_.begin, tok_.error);
    }
    return Error(tok_.begin, msg);
  }
  bool Expect(Tok kind, std::string_view what) {
    if (tok_.kind != kind) return Error(StrCat("expected ", what));
    Advance();
    return true;
  }
  bool Accept(Tok kind) {
    if (tok_.kind != kind) return false;
    Advance();
    return true;
  }
  bool AtKeyword(std::string_view k) const {
    return tok_.kind == Tok::kKeyword && tok_.text == k;
  }
  bool AtIdent(std::string_view k) const {
    return tok_.kind == Tok::kIdent && tok_.text == k;
  }
  // Lookahead: kind of the token after the current one.
  Tok PeekKind() {
    const char* pos = lexer_.position();
    Token t;
    lexer_.Next(&t);
    lexer_.set_position(pos);
    return t.kind;
  }
  struct Depth {
    Parser* p;
    explicit Depth(Parser* parser) : p(parser) { ++p->depth_; }
    ~Depth() { --p->depth_; }
    bool ok() const {
      return p->depth_ <= p->options_.max_depth || p->Error("nesting too deep");
    }
  };

  // ---- Module structure.
  bool ParseModuleText();
  bool ParseHeaderAttributes();
  bool ParseStackFrames();
  bool ParseComputation(bool* is_entry);
  Computation* ParseInstructionList(std::string name, bool allow_signature);
  bool ParseInstruction(Computation* comp, bool* has_root);
  bool ParseSingleInstruction();

  // ---- Instructions.
  bool ParseOperands(PendingInstruction* p);
  bool ParseOperand(PendingInstruction* p, Instruction** out);
  Instruction* ParseNestedInstruction(std::optional<Shape> shape);
  bool ParseAttributes(PendingInstruction* p);
  bool ParseAttribute(std::string_view key, const char* key_loc,
                      PendingInstruction* p);
  Instruction* Build(PendingInstruction* p);
  bool CheckRequired(PendingInstruction* p);
  Instruction* LookupInstruction(std::string_view name, const char* loc);
  Instruction* TupleElementRef(Instruction* base,
                               const std::vector<int64_t>& idx,
                               const char* loc);
  bool DefineName(Instruction* inst, const char* loc);
  bool CheckName(std::string_view name, const char* loc);
  std::string FreshName(std::string_view base);

  // ---- Values.
  bool ParseShape(Shape* shape);
  bool ParseLayout(Shape* shape);
  bool ParseInt(int64_t* v);
  bool ParseBool(bool* v);
  bool ParseDouble(double* v);
  bool ParseIntList(std::vector<int64_t>* v);  // {1,2}
  bool ParseIntListList(std::vector<std::vector<int64_t>>* v);
  bool ParseBareIntList(Tok open, Tok close, std::vector<int64_t>* v);
  bool ParseShapeIndex(ShapeIndex* idx);
  bool ParseString(std::string* s);
  bool ParseLiteral(const Shape& shape, Literal* lit);
  bool ParseLiteralArray(Literal* lit, int64_t dim, int64_t* index);
  bool ParseLiteralElement(Literal* lit, int64_t index);
  bool ParseShapePrefixedLiteral(Literal* lit);
  bool ParseComputationRef(Computation** c);
  bool ParseComputationList(std::vector<Computation*>* cs);
  bool ParseMetadata(OpMetadata* m);
  bool ParseFrontendAttributes(FrontendAttributes* f);
  bool ParseSharding(Sharding* s);
  bool ParseSingleSharding(Sharding* s, const char* open);
  bool ParseWindow(Window* w);
  bool ParseDimLabels(ConvolutionDimensionNumbers* d);
  bool ParsePadding(PaddingConfig* p);
  bool ParsePadToken(std::string_view text,
                     std::vector<std::vector<int64_t>>* g, const char* loc);
  bool ParseSlice(std::vector<SliceDimension>* s);
  bool ParseReplicaGroups(ReplicaGroups* g);
  // {...} at the current token; whitespace collapsed unless !normalize.
  bool ParseRawBlock(std::string* out, bool normalize = true);
  bool ParseRawValue(std::string* out);
  bool ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* a);
  bool ParsePrecisionList(std::vector<Precision>* p);
  bool ParseBoolList(std::vector<bool>* v);
  bool ParseEnumWord(std::string* w);
  bool ParseComputationLayout(ComputationLayout* l);

  std::string_view text_;
  Lexer lexer_;
  ParseOptions options_;
  Token tok_;
  absl::Status status_;
  int depth_ = 0;
  std::unique_ptr<Module> module_;
  absl::flat_hash_map<std::string, Computation*> computations_;
  // Per computation being parsed (innermost last; inline bodies nest).
  struct Scope {
    Computation* comp;
    absl::flat_hash_map<std::string, Instruction*> names;
    Instruction* last = nullptr;
    // get-tuple-elements made for `t#i` references, by (tuple, index).
    absl::flat_hash_map<std::pair<const Instruction*, int64_t>, Instruction*>
        tuple_refs;
    absl::flat_hash_set<const Instruction*> synthesized;
  };
  bool allow_unnamed_ = false;
  std::vector<Scope> scopes_;
  int64_t anon_counter_ = 0;
  const char* loc_pos_ = nullptr;
  int loc_line_ = 1, loc_col_ = 1;
};

// ===========================================================================
// Module structure
// ===========================================================================

absl::StatusOr<std::unique_ptr<Module>> Parser::Run() {
  module_ = std::make_unique<Module>("module");
  if (!ParseModuleText()) {
    if (status_.ok()) Error("parse error");
    return status_;
  }
  return std::move(module_);
}

bool Parser::ParseModuleText() {
  if (tok_.kind == Tok::kError) return Error("invalid token");
  bool had_header = false;
  if (AtKeyword("HloModule")) {
    had_header = true;
    Advance();
    if (tok_.kind == Tok::kIdent || tok_.kind == Tok::kPercentName ||
        tok_.kind == Tok::kName) {
      module_->set_name(std::string(tok_.text));
      Advance();
    } else {
      return Error("expected a module name after 'HloModule'");
    }
    if (!ParseHeaderAttributes()) return false;
    if (AtKeyword("FileNames") && !ParseStackFrames()) return false;
  } else {
    // Headerless module: ENTRY first, or a name followed by '{'.
    bool headerless = AtKeyword("ENTRY");
    if (!headerless &&
        (tok_.kind == Tok::kIdent || tok_.kind == Tok::kPercentName ||
         tok_.kind == Tok::kName)) {
      headerless = PeekKind() == Tok::kLbrace;
    }
    if (!headerless) return ParseSingleInstruction();
  }
  if (tok_.kind == Tok::kEof) return Error("expected at least one computation");
  const bool headerless = !had_header;
  Computation* last = nullptr;
  bool have_entry = false;
  while (tok_.kind != Tok::kEof) {
    if (tok_.kind == Tok::kError) return Error("invalid token");
    if (have_entry && AtKeyword("ENTRY")) {
      return Error("module has more than one ENTRY computation");
    }
    bool is_entry = false;
    if (!ParseComputation(&is_entry)) return false;
    // Inline bodies and async wrappers are added first; the computation
    // itself is always added last.
    Computation* c = module_->computations().back().get();
    if (is_entry) {
      if (have_entry)
        return Error("module has more than one ENTRY computation");
      have_entry = true;
      module_->set_entry_computation(c);
    }
    last = c;
  }
  if (!have_entry) module_->set_entry_computation(last);
  if (headerless && module_->entry_computation() != nullptr) {
    // XLA names a headerless module after its entry computation.
    module_->set_name(StrCat("module_", module_->entry_computation()->name()));
  }
  return true;
}

bool Parser::ParseHeaderAttributes() {
  ModuleConfig* cfg = module_->mutable_config();
  absl::flat_hash_set<std::string> seen;
  while (tok_.kind == Tok::kComma) {
    Advance();
    if (tok_.kind != Tok::kAttributeName) {
      return Error("expected a module attribute name");
    }
    std::string key(tok_.text);
    const char* loc = tok_.begin;
    Advance();
    if (!seen.insert(key).second) {
      return Error(loc, StrCat("module attribute '", key, "' is repeated"));
    }
    if (key == "is_scheduled") {
      bool b;
      if (!ParseBool(&b)) return false;
      cfg->is_scheduled = b;
    } else if (key == "replica_count" || key == "num_partitions") {
      int64_t v;
      if (!ParseInt(&v)) return false;
      if (v < 1) return Error(loc, StrCat(key, " must be positive"));
      (key == "replica_count" ? cfg->replica_count : cfg->num_partitions) = v;
    } else if (key == "entry_computation_layout") {
      ComputationLayout l;
      if (!ParseComputationLayout(&l)) return false;
      cfg->entry_computation_layout = std::move(l);
    } else if (key == "input_output_alias") {
      std::vector<InputOutputAlias> aliases;
      if (!Expect(Tok::kLbrace, "'{'")) return false;
      while (tok_.kind != Tok::kRbrace) {
        InputOutputAlias a;
        if (!ParseShapeIndex(&a.output_index)) return false;
        if (!Expect(Tok::kColon, "':'") || !Expect(Tok::kLparen, "'('"))
          return false;
        if (!ParseInt(&a.parameter)) return false;
        if (!Expect(Tok::kComma, "','") ||
            !ParseShapeIndex(&a.parameter_index)) {
          return false;
        }
        if (Accept(Tok::kComma)) {
          if (AtIdent("may-alias")) {
            a.kind = InputOutputAlias::Kind::kMayAlias;
          } else if (AtIdent("must-alias")) {
            a.kind = InputOutputAlias::Kind::kMustAlias;
          } else {
            return Error("expected 'may-alias' or 'must-alias'");
          }
          Advance();
        }
        if (!Expect(Tok::kRparen, "')'")) return false;
        aliases.push_back(std::move(a));
        if (!Accept(Tok::kComma)) break;
      }
      if (!Expect(Tok::kRbrace, "'}'")) return false;
      cfg->input_output_alias = std::move(aliases);
    } else if (key == "buffer_donor") {
      std::vector<BufferDonor> donors;
      if (!Expect(Tok::kLbrace, "'{'")) return false;
      while (tok_.kind != Tok::kRbrace) {
        BufferDonor d;
        if (!Expect(Tok::kLparen, "'('") || !ParseInt(&d.parameter) ||
            !Expect(Tok::kComma, "','") || !ParseShapeIndex(&d.index) ||
            !Expect(Tok::kRparen, "')'")) {
          return false;
        }
        donors.push_back(std::move(d));
        if (!Accept(Tok::kComma)) break;
      }
      if (!Expect(Tok::kRbrace, "'}'")) return false;
      cfg->buffer_donor = std::move(donors);
    } else if (key == "alias_passthrough_params") {
      bool b;
      if (!ParseBool(&b)) return false;
      cfg->alias_passthrough_params = b;
    } else if (key == "frontend_attributes") {
      FrontendAttributes f;
      if (!ParseFrontendAttributes(&f)) return false;
      std::stable_sort(f.begin(), f.end(), [](const auto& a, const auto& b) {
        return a.key < b.key;
      });
      cfg->frontend_attributes = std::move(f);
    } else if (key == "allow_spmd_sharding_propagation_to_parameters" ||
               key == "allow_spmd_sharding_propagation_to_output") {
      std::vector<bool> v;
      if (tok_.kind == Tok::kLbrace) {
        if (!ParseBoolList(&v)) return false;
      } else {
        bool b;
        if (!ParseBool(&b)) return false;
        v.push_back(b);
      }
      (key == "allow_spmd_sharding_propagation_to_parameters"
           ? cfg->allow_spmd_sharding_propagation_to_parameters
           : cfg->allow_spmd_sharding_propagation_to_output) = std::move(v);
    } else if (key == "origin_recovery_table") {
      if (!ParseRawBlock(&cfg->origin_recovery_table)) return false;
    } else if (key == "debug_attributes") {
      if (!ParseRawBlock(&cfg->debug_attributes)) return false;
    } else {
      return Error(loc, StrCat("unknown module attribute '", key, "'"));
    }
  }
  return true;
}

bool Parser::ParseStackFrames() {
  // Kept as text: from 'FileNames' to the first computation.
  const char* start = tok_.begin;
  const char* end = start;
  int depth = 0;
  while (tok_.kind != Tok::kEof) {
    if (tok_.kind == Tok::kError) return Error("invalid token");
    if (depth == 0 && (AtKeyword("ENTRY") || tok_.kind == Tok::kIdent ||
                       tok_.kind == Tok::kPercentName)) {
      break;
    }
    if (tok_.kind == Tok::kLbrace) ++depth;
    if (tok_.kind == Tok::kRbrace) --depth;
    if (depth < 0) return Error("unbalanced '}' in stack frames");
    end = tok_.end;
    Advance();
  }
  // Kept line by line (each line trimmed), as XLA prints one entry a line.
  std::string frames;
  std::string_view raw(start, end - start);
  size_t pos = 0;
  while (pos <= raw.size()) {
    size_t nl = raw.find('\n', pos);
    if (nl == std::string_view::npos) nl = raw.size();
    std::string line = NormalizeRaw(raw.substr(pos, nl - pos));
    if (!line.empty()) {
      if (!frames.empty()) frames.push_back('\n');
      frames += line;
    }
    pos = nl + 1;
  }
  module_->mutable_config()->stack_frames = std::move(frames);
  return true;
}

bool Parser::ParseComputation(bool* is_entry) {
  *is_entry = false;
  if (AtKeyword("ENTRY")) {
    *is_entry = true;
    Advance();
  }
  if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kPercentName &&
      tok_.kind != Tok::kName) {
    return Error("expected a computation name");
  }
  std::string name(tok_.text);
  const char* name_loc = tok_.begin;
  Advance();
  if (computations_.contains(name)) {
    return Error(name_loc,
                 StrCat("computation '", name, "' is already defined"));
  }
  Computation* c = ParseInstructionList(name, /*allow_signature=*/true);
  if (c == nullptr) return false;
  if (tok_.kind == Tok::kComma && PeekKind() == Tok::kAttributeName) {
    Advance();
    if (tok_.text != "execution_thread") {
      return Error(
          StrCat("unexpected computation attribute '", tok_.text, "'"));
    }
    Advance();
    std::string thread;
    if (!ParseString(&thread)) return false;
    c->set_execution_thread(thread);
  }
  return true;
}

// Parses an optional signature and a '{' instruction list '}', and adds the
// computation to the module. Returns nullptr on error.
Computation* Parser::ParseInstructionList(std::string name,
                                          bool allow_signature) {
  Depth depth(this);
  if (!depth.ok()) return nullptr;
  std::optional<Shape> declared_result;
  const char* sig_loc = tok_.begin;
  if (allow_signature && tok_.kind == Tok::kLparen) {
    Advance();
    while (tok_.kind != Tok::kRparen) {
      if (tok_.kind == Tok::kName) {
        Advance();
      } else if (tok_.kind == Tok::kIdent) {
        Advance();
        Accept(Tok::kColon);
      } else {
        Error("expected a parameter 'name:' in the computation signature");
        return nullptr;
      }
      Shape s;
      if (!ParseShape(&s)) return nullptr;
      if (!Accept(Tok::kComma)) break;
    }
    if (!Expect(Tok::kRparen, "')'") || !Expect(Tok::kArrow, "'->'")) {
      return nullptr;
    }
    Shape r;
    if (!ParseShape(&r)) return nullptr;
    declared_result = std::move(r);
  }
  if (!Expect(Tok::kLbrace, "'{' to open the computation body")) return nullptr;
  auto comp = std::make_unique<Computation>(name);
  scopes_.push_back(Scope{comp.get(), {}, nullptr});
  bool has_root = false;
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind == Tok::kEof) {
      Error("unexpected end of input: expected '}' to close the computation");
      scopes_.pop_back();
      return nullptr;
    }
    if (!ParseInstruction(comp.get(), &has_root)) {
      scopes_.pop_back();
      return nullptr;
    }
  }
  const char* close = tok_.begin;
  Advance();
  Scope scope = std::move(scopes_.back());
  scopes_.pop_back();
  if (scope.last == nullptr) {
    Error(close, StrCat("computation '", name, "' has no instructions"));
    return nullptr;
  }
  if (!has_root) comp->set_root_instruction(scope.last);
  if (declared_result &&
      !declared_result->Compatible(comp->root_instruction()->shape())) {
    Error(sig_loc,
          StrCat("computation '", name, "': the signature's result shape ",
                 declared_result->ToString(), " does not match the root's ",
                 comp->root_instruction()->shape().ToString()));
    return nullptr;
  }
  // Parameters must be numbered 0..n-1 without gaps.
  for (int64_t i = 0; i < comp->num_parameters(); ++i) {
    if (comp->parameter_instruction(i) == nullptr) {
      Error(close,
            StrCat("computation '", name, "' is missing parameter(", i, ")"));
      return nullptr;
    }
  }
  Computation* raw = module_->AddComputation(std::move(comp), false);
  computations_[name] = raw;
  return raw;
}

bool Parser::ParseSingleInstruction() {
  // A lone instruction, optionally with "name =". Undefined operands become
  // parameters. Rarely used; supported for parity with XLA's parser.
  auto comp = std::make_unique<Computation>("entry");
  scopes_.push_back(Scope{comp.get(), {}, nullptr});
  bool has_root = false;
  // Give the instruction a name if it has none.
  bool named = (tok_.kind == Tok::kPercentName || tok_.kind == Tok::kIdent) &&
               PeekKind() == Tok::kEqual;
  bool unnamed = tok_.kind == Tok::kPrimitiveType ||
                 tok_.kind == Tok::kLparen ||
                 (tok_.kind == Tok::kIdent && PeekKind() == Tok::kLparen &&
                  ParseOpcode(tok_.text).has_value());
  if (!named && !unnamed && !AtKeyword("ROOT")) {
    return Error("expected 'HloModule', a computation, or an instruction");
  }
  allow_unnamed_ = unnamed;
  if (!ParseInstruction(comp.get(), &has_root)) return false;
  if (tok_.kind != Tok::kEof)
    return Error("unexpected text after the instruction");
  scopes_.pop_back();
  if (!has_root) comp->set_root_instruction(comp->instructions().back());
  for (int64_t i = 0; i < comp->num_parameters(); ++i) {
    if (comp->parameter_instruction(i) == nullptr) {
      return Error(StrCat("the instruction is missing parameter(", i, ")"));
    }
  }
  Computation* raw = module_->AddComputation(std::move(comp), true);
  computations_["entry"] = raw;
  module_->set_name("module_entry");
  return true;
}

// ===========================================================================
// Names
// ===========================================================================

bool Parser::CheckName(std::string_view name, const char* loc) {
  if (name.empty()) return Error(loc, "empty instruction name");
  if (ParsePrimitiveType(name).has_value() && name != "tuple" &&
      name != "buffer") {
    return Error(loc, StrCat("illegal instruction name '", name,
                             "': it is a primitive type name"));
  }
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_' &&
      name.substr(0, 6) != "__xla_") {
    return Error(loc, StrCat("illegal instruction name '", name,
                             "': names starting with '__' are reserved"));
  }
  return true;
}

bool Parser::DefineName(Instruction* inst, const char* loc) {
  Scope& s = scopes_.back();
  auto it = s.names.find(inst->name());
  if (it != s.names.end() && s.synthesized.contains(it->second)) {
    // A written name wins over one the parser made up for `t#i`.
    Instruction* gte = it->second;
    s.names.erase(it);
    std::string fresh = FreshName(gte->name());
    gte->set_name(fresh);
    s.names.emplace(std::move(fresh), gte);
  }
  if (!s.names.emplace(inst->name(), inst).second) {
    return Error(loc, StrCat("instruction '", inst->name(),
                             "' is already defined in this computation"));
  }
  return true;
}

std::string Parser::FreshName(std::string_view base) {
  Scope& s = scopes_.back();
  std::string name;
  do {
    name = StrCat(base, ".anon", anon_counter_++);
  } while (s.names.contains(name));
  return name;
}

Instruction* Parser::LookupInstruction(std::string_view name, const char* loc) {
  Scope& s = scopes_.back();
  auto it = s.names.find(std::string(name));
  if (it == s.names.end()) {
    Error(loc, StrCat("instruction '", name, "' is not defined"));
    return nullptr;
  }
  return it->second;
}

// `t#1#0`: creates (or reuses) get-tuple-element instructions.
Instruction* Parser::TupleElementRef(Instruction* base,
                                     const std::vector<int64_t>& idx,
                                     const char* loc) {
  Instruction* cur = base;
  for (int64_t i : idx) {
    Scope& s = scopes_.back();
    auto it = s.tuple_refs.find({cur, i});
    if (it != s.tuple_refs.end()) {
      cur = it->second;
      continue;
    }
    std::string name = StrCat(cur->name(), "_", i);
    if (s.names.contains(name)) name = FreshName(name);
    if (!cur->shape().IsTuple() || i < 0 ||
        i >= cur->shape().tuple_shapes_size()) {
      Error(loc, StrCat("tuple index ", i, " is invalid for '", cur->name(),
                        "' of shape ", cur->shape().ToString()));
      return nullptr;
    }
    auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement,
                                             cur->shape().tuple_shapes(i));
    gte->set_int_attr(i);
    gte->set_name(name);
    gte->AppendOperand(cur);
    int line, col;
    Locate(loc, &line, &col);
    gte->set_source_location(line, col);
    Instruction* raw = s.comp->AddInstruction(std::move(gte));
    s.names.emplace(name, raw);
    s.tuple_refs[{cur, i}] = raw;
    s.synthesized.insert(raw);
    s.last = raw;
    cur = raw;
  }
  return cur;
}

// ===========================================================================
// Instructions
// ===========================================================================

bool Parser::ParseInstruction(Computation* comp, bool* has_root) {
  Depth depth(this);
  if (!depth.ok()) return false;
  PendingInstruction p;
  p.loc = tok_.begin;
  if (AtKeyword("ROOT")) {
    if (*has_root) return Error("computation has more than one ROOT");
    p.is_root = true;
    Advance();
  }
  const char* name_loc = tok_.begin;
  if (allow_unnamed_) {
    allow_unnamed_ = false;  // only the lone instruction of the text
    p.name = "instruction";
  } else if (tok_.kind == Tok::kPercentName || tok_.kind == Tok::kIdent) {
    p.name = std::string(tok_.text);
    Advance();
    if (!Expect(Tok::kEqual, "'=' after the instruction name")) return false;
  } else if (tok_.kind == Tok::kAttributeName) {
    return Error(
        "expected whitespace between the instruction name and '=' "
        "(or a '%' before the name)");
  } else if (tok_.kind == Tok::kError) {
    return Error("invalid token");
  } else {
    return Error("expected an instruction name");
  }
  if (!CheckName(p.name, name_loc)) return false;
  // Optional shape.
  if (tok_.kind == Tok::kPrimitiveType || tok_.kind == Tok::kLparen ||
      (AtIdent("b") && PeekKind() == Tok::kLparen)) {
    Shape s;
    if (!ParseShape(&s)) return false;
    p.shape = std::move(s);
  }
  if (tok_.kind != Tok::kIdent) return Error("expected an opcode");
  std::string_view word = tok_.text;
  if (auto op = ParseOpcode(word)) {
    p.opcode = *op;
  } else {
    // Async shorthand: <op>-start / <op>-update / <op>-done.
    Opcode async_op = Opcode::kAsyncStart;
    std::string_view inner;
    for (auto [suffix, op2] :
         {std::pair<std::string_view, Opcode>{"-start", Opcode::kAsyncStart},
          {"-update", Opcode::kAsyncUpdate},
          {"-done", Opcode::kAsyncDone}}) {
      if (word.size() > suffix.size() &&
          word.substr(word.size() - suffix.size()) == suffix) {
        inner = word.substr(0, word.size() - suffix.size());
        async_op = op2;
        break;
      }
    }
    auto wrapped = inner.empty() ? std::nullopt : ParseOpcode(inner);
    if (!wrapped) return Error(StrCat("unknown opcode '", word, "'"));
    switch (*wrapped) {
      case Opcode::kAllGather:
      case Opcode::kAllReduce:
      case Opcode::kCollectivePermute:
      case Opcode::kCopy:
      case Opcode::kRecv:
      case Opcode::kSend:
        return Error(StrCat("async shorthand '", word, "' is not allowed for ",
                            OpcodeName(*wrapped)));
      default:
        break;
    }
    p.opcode = async_op;
    p.wrapped = *wrapped;
  }
  Advance();
  if (!ParseOperands(&p)) return false;
  if (!ParseAttributes(&p)) return false;
  if (!CheckRequired(&p)) return false;
  Instruction* inst = Build(&p);
  if (inst == nullptr) return false;
  if (p.is_root) {
    *has_root = true;
    comp->set_root_instruction(inst);
  }
  return true;
}

bool Parser::ParseOperands(PendingInstruction* p) {
  const Opcode op =
      p->wrapped && p->opcode == Opcode::kAsyncStart ? *p->wrapped : p->opcode;
  if (!Expect(Tok::kLparen, "'(' to open the operand list")) return false;
  if (op == Opcode::kParameter && !p->wrapped) {
    int64_t n;
    const char* loc = tok_.begin;
    if (!ParseInt(&n)) return false;
    if (n < 0) return Error(loc, "parameter number must be non-negative");
    p->int_attr = n;
    p->has_int_attr = true;
    return Expect(Tok::kRparen, "')'");
  }
  if (op == Opcode::kConstant && !p->wrapped) {
    if (!p->shape) return Error("a constant needs an explicit shape");
    Literal lit;
    if (!ParseLiteral(*p->shape, &lit)) return false;
    p->literal = std::move(lit);
    return Expect(Tok::kRparen, "')' after the constant's literal");
  }
  while (tok_.kind != Tok::kRparen) {
    Instruction* operand = nullptr;
    if (!ParseOperand(p, &operand)) return false;
    p->operands.push_back(operand);
    if (!Accept(Tok::kComma)) break;
  }
  if (!Expect(Tok::kRparen, "')' to close the operand list")) return false;
  const int arity = OpcodeArity(op);
  const bool sparse_conv =
      op == Opcode::kConvolution && p->operands.size() == 3;
  if (arity >= 0 && !p->wrapped && !sparse_conv &&
      static_cast<int>(p->operands.size()) != arity) {
    return Error(p->loc,
                 StrCat(OpcodeName(op), " takes ", arity, " operand(s) but ",
                        p->operands.size(), " were given"));
  }
  if ((op == Opcode::kReduce || op == Opcode::kReduceWindow) && !p->wrapped &&
      p->operands.size() % 2 != 0) {
    return Error(p->loc, StrCat(OpcodeName(op),
                                " takes an even number of operands (inputs "
                                "then init values)"));
  }
  if ((p->opcode == Opcode::kAsyncUpdate || p->opcode == Opcode::kAsyncDone) &&
      p->operands.empty()) {
    return Error(p->loc, "async update/done take the async start as operand");
  }
  return true;
}

bool Parser::ParseOperand(PendingInstruction* p, Instruction** out) {
  (void)p;
  Depth depth(this);
  if (!depth.ok()) return false;
  std::optional<Shape> shape;
  if (tok_.kind == Tok::kPrimitiveType || tok_.kind == Tok::kLparen ||
      (AtIdent("b") && PeekKind() == Tok::kLparen)) {
    Shape s;
    if (!ParseShape(&s)) return false;
    shape = std::move(s);
  }
  const char* loc = tok_.begin;
  if (tok_.kind == Tok::kIdent && PeekKind() == Tok::kLparen &&
      ParseOpcode(tok_.text).has_value()) {
    *out = ParseNestedInstruction(std::move(shape));
    return *out != nullptr;
  }
  if (tok_.kind != Tok::kPercentName && tok_.kind != Tok::kIdent) {
    if (shape && scopes_.size() == 1 &&
        scopes_.back().comp->name() == "entry" &&
        module_->computations().empty()) {
      // Single-instruction mode: an unnamed operand is a new parameter.
      Scope& s = scopes_.back();
      auto param = std::make_unique<Instruction>(Opcode::kParameter, *shape);
      param->set_int_attr(s.comp->num_parameters());
      param->set_name(StrCat("_", s.comp->num_parameters()));
      Instruction* raw = s.comp->AddInstruction(std::move(param));
      s.names.emplace(raw->name(), raw);
      *out = raw;
      return true;
    }
    return Error("expected an operand name");
  }
  std::string name(tok_.text);
  Advance();
  Instruction* inst = nullptr;
  Scope& s = scopes_.back();
  auto it = s.names.find(name);
  if (it != s.names.end()) {
    inst = it->second;
  } else if (shape && scopes_.size() == 1 && s.comp->name() == "entry" &&
             module_->computations().empty()) {
    auto param = std::make_unique<Instruction>(Opcode::kParameter, *shape);
    param->set_int_attr(s.comp->num_parameters());
    param->set_name(name);
    inst = s.comp->AddInstruction(std::move(param));
    s.names.emplace(name, inst);
  } else {
    return Error(loc, StrCat("instruction '", name, "' is not defined"));
  }
  // Compact tuple references: name#1#0.
  std::vector<int64_t> idx;
  while (tok_.kind == Tok::kOctothorp) {
    Advance();
    int64_t i;
    if (!ParseInt(&i)) return false;
    idx.push_back(i);
  }
  if (!idx.empty()) {
    inst = TupleElementRef(inst, idx, loc);
    if (inst == nullptr) return false;
  }
  if (shape && !shape->Compatible(inst->shape())) {
    return Error(loc, StrCat("operand '", inst->name(), "' has shape ",
                             inst->shape().ToString(), " but is written as ",
                             shape->ToString()));
  }
  *out = inst;
  return true;
}

Instruction* Parser::ParseNestedInstruction(std::optional<Shape> shape) {
  PendingInstruction p;
  p.loc = tok_.begin;
  p.opcode = *ParseOpcode(tok_.text);
  p.shape = std::move(shape);
  Advance();
  if (!ParseOperands(&p)) return nullptr;
  if (!CheckRequired(&p)) return nullptr;
  p.name = FreshName(OpcodeName(p.opcode));
  return Build(&p);
}

bool Parser::ParseAttributes(PendingInstruction* p) {
  while (tok_.kind == Tok::kComma) {
    // A comma followed by something other than an attribute name ends the
    // instruction (e.g. an execution_thread after a computation's brace is
    // handled by the caller; inside a body that is an error).
    Advance();
    if (tok_.kind != Tok::kAttributeName) {
      return Error("expected an attribute name (written as 'name=value')");
    }
    std::string_view key = tok_.text;
    const char* loc = tok_.begin;
    Advance();
    if (!p->seen.insert(key)) {
      return Error(loc, StrCat("attribute '", key, "' is repeated"));
    }
    if (!ParseAttribute(key, loc, p)) return false;
  }
  return true;
}

// Which opcodes accept which opcode-specific attribute keys.
bool KeyAllowed(Opcode op, std::string_view key) {
  using O = Opcode;
  auto in = [op](std::initializer_list<Opcode> ops) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
  };
  const bool collective =
      in({O::kAllReduce, O::kAllReduceStart, O::kReduceScatter, O::kAllGather,
          O::kAllGatherStart, O::kAllToAll, O::kRaggedAllToAll,
          O::kCollectiveBroadcast, O::kCollectivePermute,
          O::kCollectivePermuteStart});
  if (key == "dimensions") {
    return in({O::kBroadcast, O::kTranspose, O::kReverse, O::kConcatenate,
               O::kReduce, O::kMap, O::kSort, O::kScan, O::kAllGather,
               O::kAllGatherStart, O::kReduceScatter, O::kAllToAll,
               O::kRaggedAllToAll, O::kGetDimensionSize, O::kSetDimensionSize});
  }
  if (key == "to_apply") {
    return in({O::kReduce, O::kReduceWindow, O::kMap, O::kSort, O::kScan,
               O::kScatter, O::kCall, O::kAllReduce, O::kAllReduceStart,
               O::kReduceScatter, O::kCustomCall});
  }
  if (key == "index") return op == O::kGetTupleElement;
  if (key == "iota_dimension") return op == O::kIota;
  if (key == "is_stable") return in({O::kSort, O::kTopK});
  if (key == "num_carries" || key == "is_reverse" || key == "is_associative") {
    return op == O::kScan;
  }
  if (key == "k" || key == "largest") return op == O::kTopK;
  if (key == "window") {
    return in({O::kReduceWindow, O::kSelectAndScatter, O::kConvolution,
               O::kCustomCall});
  }
  if (key == "select" || key == "scatter") return op == O::kSelectAndScatter;
  if (key == "dim_labels" || key == "feature_group_count" ||
      key == "batch_group_count") {
    return in({O::kConvolution, O::kCustomCall});
  }
  if (key == "convolution_kind" || key == "sparsity_config") {
    return op == O::kConvolution;
  }
  if (key == "lhs_contracting_dims" || key == "rhs_contracting_dims" ||
      key == "lhs_batch_dims" || key == "rhs_batch_dims") {
    return in({O::kDot, O::kScaledDot, O::kRaggedDot});
  }
  if (key == "lhs_ragged_dims" || key == "rhs_group_dims") {
    return op == O::kRaggedDot;
  }
  if (key == "operand_precision") {
    return in({O::kDot, O::kScaledDot, O::kRaggedDot, O::kConvolution,
               O::kCustomCall});
  }
  if (key == "algorithm") {
    return in({O::kDot, O::kScaledDot, O::kConvolution, O::kRngBitGenerator});
  }
  if (key == "offset_dims" || key == "collapsed_slice_dims" ||
      key == "start_index_map" || key == "operand_batching_dims" ||
      key == "start_indices_batching_dims") {
    return op == O::kGather;
  }
  if (key == "index_vector_dim" || key == "indices_are_sorted") {
    return in({O::kGather, O::kScatter});
  }
  if (key == "slice_sizes") {
    return in({O::kGather, O::kCollectivePermute, O::kCollectivePermuteStart});
  }
  if (key == "update_window_dims" || key == "inserted_window_dims" ||
      key == "scatter_dims_to_operand_dims" || key == "input_batching_dims" ||
      key == "scatter_indices_batching_dims" || key == "unique_indices") {
    return op == O::kScatter;
  }
  if (key == "slice") return op == O::kSlice;
  if (key == "dynamic_slice_sizes") return op == O::kDynamicSlice;
  if (key == "padding") return op == O::kPad;
  if (key == "direction" || key == "type") return op == O::kCompare;
  if (key == "fft_type" || key == "fft_length") return op == O::kFft;
  if (key == "left_side" || key == "unit_diagonal" || key == "transpose_a") {
    return op == O::kTriangularSolve;
  }
  if (key == "lower") return in({O::kTriangularSolve, O::kCholesky});
  if (key == "epsilon" || key == "feature_index") {
    return in(
        {O::kBatchNormTraining, O::kBatchNormInference, O::kBatchNormGrad});
  }
  if (key == "exponent_bits" || key == "mantissa_bits") {
    return op == O::kReducePrecision;
  }
  if (key == "distribution") return op == O::kRng;
  if (key == "delta") return op == O::kRngGetAndUpdateState;
  if (key == "inferred_dimension") return op == O::kReshape;
  if (key == "is_composite") return op == O::kCall;
  if (key == "condition" || key == "body") return op == O::kWhile;
  if (key == "true_computation" || key == "false_computation" ||
      key == "branch_computations") {
    return op == O::kConditional;
  }
  if (key == "kind") return op == O::kFusion;
  if (key == "calls") {
    return in({O::kFusion, O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone,
               O::kCall, O::kCustomCall});
  }
  if (key == "output_to_operand_aliasing") {
    return in({O::kFusion, O::kCustomCall, O::kAsyncStart, O::kAsyncUpdate,
               O::kCall});
  }
  if (key == "custom_call_target" || key == "operand_layout_constraints" ||
      key == "custom_call_has_side_effect" || key == "called_computations" ||
      key == "padding_type" || key == "literal" || key == "schedule" ||
      key == "api_version") {
    return op == O::kCustomCall;
  }
  if (key == "replica_groups" || key == "channel_id") {
    return collective || in({O::kSend, O::kRecv, O::kSendDone, O::kRecvDone});
  }
  if (key == "constrain_layout") {
    return in({O::kAllReduce, O::kAllReduceStart, O::kReduceScatter,
               O::kAllGather, O::kAllGatherStart, O::kAllToAll});
  }
  if (key == "use_global_device_ids") {
    return in({O::kAllReduce, O::kAllReduceStart, O::kReduceScatter,
               O::kAllGather, O::kAllGatherStart});
  }
  if (key == "mode") {
    return in({O::kAllReduce, O::kAllReduceStart, O::kReduceScatter});
  }
  if (key == "source_target_pairs") {
    return in({O::kCollectivePermute, O::kCollectivePermuteStart});
  }
  if (key == "has_dynamic_root") return op == O::kCollectiveBroadcast;
  if (key == "cross_program_prefetch_index") return op == O::kCopyStart;
  if (key == "is_host_transfer") {
    return in({O::kSend, O::kRecv, O::kSendDone, O::kRecvDone});
  }
  if (key == "infeed_config") return op == O::kInfeed;
  if (key == "outfeed_config" || key == "outfeed_shape") {
    return op == O::kOutfeed;
  }
  if (key == "domain") return op == O::kDomain;
  if (key == "async_execution_thread") {
    return in({O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
  }
  if (key == "result_accuracy") return IsTranscendental(op);
  return false;
}

// Attribute keys that XLA's parser knows for some opcode.
bool IsKnownKey(std::string_view key) {
  for (int i = 0; i < kNumOpcodes; ++i) {
    if (KeyAllowed(static_cast<Opcode>(i), key)) return true;
  }
  return false;
}

bool Parser::ParseAttribute(std::string_view key, const char* key_loc,
                            PendingInstruction* p) {
  InstructionAttrs& a = p->attrs();
  // Generic attributes.
  if (key == "metadata") {
    OpMetadata m;
    if (!ParseMetadata(&m)) return false;
    p->metadata = std::move(m);
    return true;
  }
  if (key == "backend_config") {
    std::string cfg;
    if (tok_.kind == Tok::kString) {
      cfg = tok_.str;
      Advance();
    } else if (tok_.kind == Tok::kLbrace) {
      // Kept byte for byte, as XLA does.
      if (!ParseRawBlock(&cfg, /*normalize=*/false)) return false;
    } else {
      return Error("expected a string or a {...} block for backend_config");
    }
    p->backend_config = std::move(cfg);
    return true;
  }
  if (key == "frontend_attributes") {
    FrontendAttributes f;
    if (!ParseFrontendAttributes(&f)) return false;
    p->frontend_attributes = std::move(f);
    return true;
  }
  if (key == "sharding") {
    Sharding s;
    if (!ParseSharding(&s)) return false;
    a.sharding = std::move(s);
    p->has_attrs = true;
    return true;
  }
  if (key == "control-predecessors") {
    if (!Expect(Tok::kLbrace, "'{'")) return false;
    while (tok_.kind != Tok::kRbrace) {
      if (tok_.kind != Tok::kPercentName && tok_.kind != Tok::kIdent) {
        return Error("expected an instruction name");
      }
      Instruction* pred = LookupInstruction(tok_.text, tok_.begin);
      if (pred == nullptr) return false;
      p->control_predecessors.push_back(pred);
      Advance();
      if (!Accept(Tok::kComma)) break;
    }
    return Expect(Tok::kRbrace, "'}'");
  }
  if (key == "parameter_replication") {
    std::vector<bool> v;
    if (!ParseBoolList(&v)) return false;
    a.parameter_replication = std::move(v);
    p->has_attrs = true;
    return true;
  }
  if (key == "statistics" || key == "origin") {
    std::string raw;
    if (!ParseRawBlock(&raw)) return false;
    (key == "statistics" ? a.statistics_text : a.origin_text) = std::move(raw);
    p->has_attrs = true;
    return true;
  }

  const Opcode op =
      p->wrapped && p->opcode == Opcode::kAsyncStart ? *p->wrapped : p->opcode;
  if (!KeyAllowed(op, key) &&
      !(p->wrapped && p->opcode == Opcode::kAsyncStart &&
        (key == "async_execution_thread" || key == "calls")) &&
      !(p->wrapped && key == "async_execution_thread")) {
    if (IsKnownKey(key)) {
      return Error(key_loc, StrCat("attribute '", key, "' is not valid for ",
                                   OpcodeName(op)));
    }
    // Unknown to the IR: keep the text so it prints back unchanged.
    std::string raw;
    if (!ParseRawValue(&raw)) return false;
    a.unknown.emplace_back(std::string(key), std::move(raw));
    p->has_attrs = true;
    return true;
  }
  p->has_attrs = true;
  if (key == "dimensions") {
    std::vector<int64_t> v;
    const char* vloc = tok_.begin;
    if (!ParseIntList(&v)) return false;
    switch (op) {
      case Opcode::kAllGather:
      case Opcode::kAllGatherStart:
      case Opcode::kReduceScatter:
      case Opcode::kSort:
      case Opcode::kConcatenate:
      case Opcode::kScan:
      case Opcode::kGetDimensionSize:
      case Opcode::kSetDimensionSize:
        if (v.size() != 1) {
          return Error(vloc,
                       StrCat(OpcodeName(op),
                              " takes exactly one dimension in dimensions="));
        }
        break;
      case Opcode::kAllToAll:
        if (v.size() > 1) {
          return Error(vloc, "all-to-all takes at most one dimension");
        }
        break;
      default:
        break;
    }
    p->dimensions = DimVector(v.begin(), v.end());
    return true;
  }
  if (key == "index" || key == "iota_dimension") {
    if (!ParseInt(&p->int_attr)) return false;
    p->has_int_attr = true;
    return true;
  }
  if (key == "to_apply" || key == "condition" || key == "body" ||
      key == "select" || key == "scatter" || key == "true_computation" ||
      key == "false_computation") {
    Computation* c;
    if (!ParseComputationRef(&c)) return false;
    if (key == "to_apply") p->to_apply = c;
    if (key == "condition") p->condition = c;
    if (key == "body") p->body = c;
    if (key == "select") p->select = c;
    if (key == "scatter") p->scatter = c;
    if (key == "true_computation") p->true_computation = c;
    if (key == "false_computation") p->false_computation = c;
    return true;
  }
  if (key == "calls") {
    p->has_calls = true;
    if (tok_.kind == Tok::kLbrace && PeekKind() != Tok::kRbrace) {
      // `calls={a, b}` or an inline body `calls={ x = ... }`.
      const char* save = lexer_.position();
      Token saved = tok_;
      Advance();
      bool list =
          (tok_.kind == Tok::kPercentName || tok_.kind == Tok::kIdent) &&
          (PeekKind() == Tok::kComma || PeekKind() == Tok::kRbrace);
      lexer_.set_position(save);
      tok_ = saved;
      if (list) return ParseComputationList(&p->calls);
    }
    Computation* c;
    if (!ParseComputationRef(&c)) return false;
    p->calls.push_back(c);
    return true;
  }
  if (key == "branch_computations" || key == "called_computations") {
    auto& list = key == "branch_computations" ? p->branch_computations
                                              : p->called_computations;
    (key == "branch_computations" ? p->has_branch_computations
                                  : p->has_called_computations) = true;
    return ParseComputationList(&list);
  }
  if (key == "is_stable") return ParseBool(&a.is_stable);
  if (key == "largest") return ParseBool(&a.largest);
  if (key == "k") return ParseInt(&a.k);
  if (key == "num_carries") return ParseInt(&a.num_carries);
  if (key == "is_reverse") return ParseBool(&a.is_reverse);
  if (key == "is_associative") {
    bool b;
    if (!ParseBool(&b)) return false;
    a.is_associative = b;
    return true;
  }
  if (key == "window") {
    Window w;
    if (!ParseWindow(&w)) return false;
    a.window = std::move(w);
    return true;
  }
  if (key == "dim_labels") {
    ConvolutionDimensionNumbers d;
    if (!ParseDimLabels(&d)) return false;
    a.conv_dnums = std::move(d);
    return true;
  }
  if (key == "feature_group_count") return ParseInt(&a.feature_group_count);
  if (key == "batch_group_count") return ParseInt(&a.batch_group_count);
  if (key == "convolution_kind") {
    if (tok_.kind != Tok::kIdent) return Error("expected a convolution kind");
    a.convolution_kind = std::string(tok_.text);
    if (a.convolution_kind != "fprop" && a.convolution_kind != "dgrad" &&
        a.convolution_kind != "wgrad" && a.convolution_kind != "unset") {
      return Error("convolution_kind must be fprop, dgrad, wgrad or unset");
    }
    Advance();
    return true;
  }
  if (key == "sparsity_config") return ParseRawBlock(&a.sparsity_config);
  if (key == "lhs_contracting_dims" || key == "rhs_contracting_dims" ||
      key == "lhs_batch_dims" || key == "rhs_batch_dims") {
    if (!a.dot_dnums) a.dot_dnums.emplace();
    auto& d = *a.dot_dnums;
    auto& v = key == "lhs_contracting_dims"   ? d.lhs_contracting_dimensions
              : key == "rhs_contracting_dims" ? d.rhs_contracting_dimensions
              : key == "lhs_batch_dims"       ? d.lhs_batch_dimensions
                                              : d.rhs_batch_dimensions;
    return ParseIntList(&v);
  }
  if (key == "lhs_ragged_dims" || key == "rhs_group_dims") {
    if (!a.ragged_dnums) a.ragged_dnums.emplace();
    return ParseIntList(key == "lhs_ragged_dims"
                            ? &a.ragged_dnums->lhs_ragged_dimensions
                            : &a.ragged_dnums->rhs_group_dimensions);
  }
  if (key == "operand_precision")
    return ParsePrecisionList(&a.operand_precision);
  if (key == "algorithm") {
    std::string w;
    if (!ParseEnumWord(&w)) return false;
    w = ToLower(w);
    if (op == Opcode::kRngBitGenerator) {
      if (w != "rng_default" && w != "rng_three_fry" && w != "rng_philox") {
        return Error(key_loc, StrCat("unknown rng algorithm '", w, "'"));
      }
    } else {
      static constexpr std::string_view kAlgos[] = {
          "dot_any_f8_any_f8_f32",
          "dot_any_f8_any_f8_f32_fast_accum",
          "dot_f16_f16_f16",
          "dot_f16_f16_f32",
          "dot_bf16_bf16_bf16",
          "dot_bf16_bf16_f32",
          "dot_bf16_bf16_f32_x3",
          "dot_bf16_bf16_f32_x6",
          "dot_bf16_bf16_f32_x9",
          "dot_tf32_tf32_f32",
          "dot_tf32_tf32_f32_x3",
          "dot_f32_f32_f32",
          "dot_f64_f64_f64",
          "unset",
          "alg_unset",
          "dot_any_f8_any_f8_any",
          "dot_any_f8_any_f8_f32_fast_accum"};
      if (std::find(std::begin(kAlgos), std::end(kAlgos), w) ==
          std::end(kAlgos)) {
        return Error(key_loc, StrCat("unknown dot algorithm '", w, "'"));
      }
    }
    a.algorithm = std::move(w);
    return true;
  }
  if (key == "offset_dims" || key == "collapsed_slice_dims" ||
      key == "start_index_map" || key == "operand_batching_dims" ||
      key == "start_indices_batching_dims") {
    if (!a.gather_dnums) a.gather_dnums.emplace();
    auto& g = *a.gather_dnums;
    auto& v = key == "offset_dims"             ? g.offset_dims
              : key == "collapsed_slice_dims"  ? g.collapsed_slice_dims
              : key == "start_index_map"       ? g.start_index_map
              : key == "operand_batching_dims" ? g.operand_batching_dims
                                               : g.start_indices_batching_dims;
    return ParseIntList(&v);
  }
  if (key == "index_vector_dim") {
    int64_t v;
    if (!ParseInt(&v)) return false;
    if (op == Opcode::kGather) {
      if (!a.gather_dnums) a.gather_dnums.emplace();
      a.gather_dnums->index_vector_dim = v;
    } else {
      if (!a.scatter_dnums) a.scatter_dnums.emplace();
      a.scatter_dnums->index_vector_dim = v;
    }
    return true;
  }
  if (key == "slice_sizes") {
    if (op == Opcode::kGather) return ParseIntList(&a.gather_slice_sizes);
    return ParseIntListList(&a.permute_slice_sizes);
  }
  if (key == "update_window_dims" || key == "inserted_window_dims" ||
      key == "scatter_dims_to_operand_dims" || key == "input_batching_dims" ||
      key == "scatter_indices_batching_dims") {
    if (!a.scatter_dnums) a.scatter_dnums.emplace();
    auto& s = *a.scatter_dnums;
    auto& v = key == "update_window_dims"     ? s.update_window_dims
              : key == "inserted_window_dims" ? s.inserted_window_dims
              : key == "scatter_dims_to_operand_dims"
                  ? s.scatter_dims_to_operand_dims
              : key == "input_batching_dims" ? s.input_batching_dims
                                             : s.scatter_indices_batching_dims;
    return ParseIntList(&v);
  }
  if (key == "indices_are_sorted") return ParseBool(&a.indices_are_sorted);
  if (key == "unique_indices") return ParseBool(&a.unique_indices);
  if (key == "slice") return ParseSlice(&a.slice);
  if (key == "dynamic_slice_sizes") return ParseIntList(&a.dynamic_slice_sizes);
  if (key == "padding") {
    a.has_padding = true;
    return ParsePadding(&a.padding);
  }
  if (key == "direction") {
    if (tok_.kind != Tok::kIdent)
      return Error("expected a comparison direction");
    static constexpr std::string_view kDirs[] = {"EQ", "NE", "LT",
                                                 "LE", "GT", "GE"};
    for (int i = 0; i < 6; ++i) {
      if (tok_.text == kDirs[i]) {
        p->direction = static_cast<ComparisonDirection>(i);
        Advance();
        return true;
      }
    }
    return Error(StrCat("unknown comparison direction '", tok_.text, "'"));
  }
  if (key == "type") {
    if (tok_.kind != Tok::kIdent) return Error("expected a comparison type");
    static constexpr std::string_view kTypes[] = {"FLOAT", "TOTALORDER",
                                                  "SIGNED", "UNSIGNED"};
    for (int i = 0; i < 4; ++i) {
      if (tok_.text == kTypes[i]) {
        p->comparison_type = static_cast<ComparisonType>(i + 1);
        Advance();
        return true;
      }
    }
    return Error(StrCat("unknown comparison type '", tok_.text, "'"));
  }
  if (key == "fft_type") {
    static constexpr std::string_view kTypes[] = {"FFT", "IFFT", "RFFT",
                                                  "IRFFT"};
    for (int i = 0; i < 4; ++i) {
      if (tok_.kind == Tok::kIdent && tok_.text == kTypes[i]) {
        a.fft_type = static_cast<FftType>(i);
        Advance();
        return true;
      }
    }
    return Error("expected FFT, IFFT, RFFT or IRFFT");
  }
  if (key == "fft_length") return ParseIntList(&a.fft_length);
  if (key == "left_side") return ParseBool(&a.left_side);
  if (key == "lower") {
    a.has_lower = true;
    return ParseBool(&a.lower);
  }
  if (key == "unit_diagonal") return ParseBool(&a.unit_diagonal);
  if (key == "transpose_a") {
    static constexpr std::string_view kT[] = {"NO_TRANSPOSE", "TRANSPOSE",
                                              "ADJOINT"};
    for (int i = 0; i < 3; ++i) {
      if (tok_.kind == Tok::kIdent && tok_.text == kT[i]) {
        a.transpose_a = static_cast<TriangularTranspose>(i);
        Advance();
        return true;
      }
    }
    return Error("expected NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  }
  if (key == "epsilon") {
    double d;
    if (!ParseDouble(&d)) return false;
    a.epsilon = static_cast<float>(d);
    return true;
  }
  if (key == "feature_index") return ParseInt(&a.feature_index);
  if (key == "exponent_bits") return ParseInt(&a.exponent_bits);
  if (key == "mantissa_bits") return ParseInt(&a.mantissa_bits);
  if (key == "distribution") {
    std::string w;
    if (!ParseEnumWord(&w)) return false;
    if (EqualsIgnoreCase(w, "rng_uniform")) {
      a.distribution = RandomDistribution::kUniform;
    } else if (EqualsIgnoreCase(w, "rng_normal")) {
      a.distribution = RandomDistribution::kNormal;
    } else {
      return Error(key_loc, StrCat("unknown distribution '", w, "'"));
    }
    return true;
  }
  if (key == "delta") return ParseInt(&a.delta);
  if (key == "inferred_dimension") {
    int64_t v;
    if (!ParseInt(&v)) return false;
    a.inferred_dimension = v;
    return true;
  }
  if (key == "is_composite") return ParseBool(&a.is_composite);
  if (key == "kind") {
    static constexpr std::string_view kKinds[] = {"kLoop", "kInput", "kOutput",
                                                  "kCustom"};
    for (int i = 0; i < 4; ++i) {
      if (tok_.kind == Tok::kIdent && tok_.text == kKinds[i]) {
        p->fusion_kind = static_cast<FusionKind>(i);
        Advance();
        return true;
      }
    }
    return Error("expected a fusion kind (kLoop, kInput, kOutput, kCustom)");
  }
  if (key == "output_to_operand_aliasing") {
    a.has_output_to_operand_aliasing = true;
    return ParseOutputOperandAliasing(&a.output_to_operand_aliasing);
  }
  if (key == "custom_call_target") {
    a.has_custom_call_target = true;
    return ParseString(&a.custom_call_target);
  }
  if (key == "operand_layout_constraints") {
    std::vector<Shape> shapes;
    if (!Expect(Tok::kLbrace, "'{'")) return false;
    while (tok_.kind != Tok::kRbrace) {
      Shape s;
      if (!ParseShape(&s)) return false;
      shapes.push_back(std::move(s));
      if (!Accept(Tok::kComma)) break;
    }
    if (!Expect(Tok::kRbrace, "'}'")) return false;
    a.operand_layout_constraints = std::move(shapes);
    return true;
  }
  if (key == "custom_call_has_side_effect") {
    return ParseBool(&a.custom_call_has_side_effect);
  }
  if (key == "padding_type" || key == "schedule") {
    std::string w;
    if (!ParseEnumWord(&w)) return false;
    for (char& c : w)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (key == "padding_type") {
      if (w != "PADDING_VALID" && w != "PADDING_SAME") {
        return Error(key_loc,
                     "padding_type must be PADDING_VALID or PADDING_SAME");
      }
      a.padding_type = std::move(w);
    } else {
      if (w != "SCHEDULE_NONE" && w != "SCHEDULE_LATEST" &&
          w != "SCHEDULE_EARLIEST") {
        return Error(key_loc, StrCat("unknown schedule '", w, "'"));
      }
      a.schedule = std::move(w);
    }
    return true;
  }
  if (key == "api_version") {
    std::string w;
    if (!ParseEnumWord(&w)) return false;
    static constexpr std::pair<std::string_view, CustomCallApiVersion> kV[] = {
        {"API_VERSION_UNSPECIFIED", CustomCallApiVersion::kUnspecified},
        {"API_VERSION_ORIGINAL", CustomCallApiVersion::kOriginal},
        {"API_VERSION_STATUS_RETURNING",
         CustomCallApiVersion::kStatusReturning},
        {"API_VERSION_STATUS_RETURNING_UNIFIED",
         CustomCallApiVersion::kStatusReturningUnified},
        {"API_VERSION_TYPED_FFI", CustomCallApiVersion::kTypedFfi}};
    for (auto [name, v] : kV) {
      if (EqualsIgnoreCase(w, name)) {
        a.api_version = v;
        return true;
      }
    }
    return Error(key_loc, StrCat("unknown api_version '", w, "'"));
  }
  if (key == "literal") {
    Literal lit;
    if (!ParseShapePrefixedLiteral(&lit)) return false;
    a.custom_call_literal = std::move(lit);
    return true;
  }
  if (key == "replica_groups") {
    ReplicaGroups g;
    if (!ParseReplicaGroups(&g)) return false;
    a.replica_groups = std::move(g);
    return true;
  }
  if (key == "channel_id") {
    int64_t v;
    if (!ParseInt(&v)) return false;
    a.channel_id = v;
    return true;
  }
  if (key == "constrain_layout") return ParseBool(&a.constrain_layout);
  if (key == "use_global_device_ids")
    return ParseBool(&a.use_global_device_ids);
  if (key == "mode") {
    std::string w;
    return ParseEnumWord(&w);  // parsed then ignored, as XLA does
  }
  if (key == "source_target_pairs") {
    std::vector<std::vector<int64_t>> pairs;
    const char* loc = tok_.begin;
    if (!ParseIntListList(&pairs)) return false;
    for (const auto& pr : pairs) {
      if (pr.size() != 2) {
        return Error(loc,
                     "each source_target_pairs entry must have 2 elements");
      }
      a.source_target_pairs.emplace_back(pr[0], pr[1]);
    }
    a.has_source_target_pairs = true;
    return true;
  }
  if (key == "has_dynamic_root") return ParseBool(&a.has_dynamic_root);
  if (key == "cross_program_prefetch_index") {
    int64_t v;
    if (!ParseInt(&v)) return false;
    a.cross_program_prefetch_index = v;
    return true;
  }
  if (key == "is_host_transfer") return ParseBool(&a.is_host_transfer);
  if (key == "infeed_config") return ParseString(&a.infeed_config);
  if (key == "outfeed_config") return ParseString(&a.outfeed_config);
  if (key == "outfeed_shape") {
    Shape s;
    if (!ParseShape(&s)) return false;
    a.outfeed_shape = std::move(s);
    return true;
  }
  if (key == "domain") return ParseRawBlock(&a.domain_text);
  if (key == "async_execution_thread")
    return ParseString(&a.async_execution_thread);
  if (key == "result_accuracy") {
    if (!ParseRawBlock(&a.result_accuracy_text)) return false;
    std::string_view t = a.result_accuracy_text;
    bool ok = t == "{mode=default}" || t == "{mode=highest}" ||
              EqualsIgnoreCase(t, "{mode=DEFAULT}") ||
              EqualsIgnoreCase(t, "{mode=HIGHEST}") ||
              t.substr(0, 12) == "{tolerance={";
    if (!ok) {
      return Error(key_loc,
                   "result_accuracy must be {mode=default|highest} or "
                   "{tolerance={atol=..,rtol=..,ulps=..}}");
    }
    return true;
  }
  return Error(key_loc, StrCat("unhandled attribute '", key, "'"));
}

bool Parser::CheckRequired(PendingInstruction* p) {
  const Opcode op =
      p->wrapped && p->opcode == Opcode::kAsyncStart ? *p->wrapped : p->opcode;
  if (p->wrapped && p->opcode != Opcode::kAsyncStart) return true;
  auto need = [&](bool have, std::string_view what) {
    if (have) return true;
    return Error(p->loc,
                 StrCat(OpcodeName(op), " requires attribute '", what, "'"));
  };
  const InstructionAttrs& a = p->attrs_or_empty();
  switch (op) {
    case Opcode::kBroadcast:
      if (!p->dimensions && !p->operands.empty() &&
          p->operands[0]->shape().IsArray() &&
          p->operands[0]->shape().rank() == 0) {
        p->dimensions = DimVector();
      }
      return need(p->dimensions.has_value(), "dimensions");
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      return need(p->dimensions.has_value(), "dimensions");
    case Opcode::kReduce:
      return need(p->dimensions.has_value(), "dimensions") &&
             need(p->to_apply != nullptr, "to_apply");
    case Opcode::kSort:
      return need(p->dimensions.has_value(), "dimensions") &&
             need(p->to_apply != nullptr, "to_apply");
    case Opcode::kScan:
      return need(p->dimensions.has_value(), "dimensions") &&
             need(p->to_apply != nullptr, "to_apply") &&
             need(p->seen.contains("num_carries"), "num_carries");
    case Opcode::kMap:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kCall:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      if (op == Opcode::kScatter &&
          !need(a.scatter_dnums.has_value() &&
                    p->seen.contains("update_window_dims") &&
                    p->seen.contains("inserted_window_dims") &&
                    p->seen.contains("scatter_dims_to_operand_dims") &&
                    p->seen.contains("index_vector_dim"),
                "update_window_dims/inserted_window_dims/"
                "scatter_dims_to_operand_dims/index_vector_dim")) {
        return false;
      }
      return need(p->to_apply != nullptr, "to_apply");
    case Opcode::kReduceScatter:
      return need(p->to_apply != nullptr, "to_apply") &&
             need(p->dimensions.has_value(), "dimensions");
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      return need(p->dimensions.has_value(), "dimensions");
    case Opcode::kGetTupleElement:
      return need(p->has_int_attr, "index");
    case Opcode::kIota:
      return need(p->has_int_attr, "iota_dimension");
    case Opcode::kSlice:
      return need(p->seen.contains("slice"), "slice");
    case Opcode::kDynamicSlice:
      return need(p->seen.contains("dynamic_slice_sizes"),
                  "dynamic_slice_sizes");
    case Opcode::kPad:
      return need(a.has_padding, "padding");
    case Opcode::kConvolution:
      return need(a.conv_dnums.has_value(), "dim_labels");
    case Opcode::kGather:
      return need(p->seen.contains("offset_dims") &&
                      p->seen.contains("collapsed_slice_dims") &&
                      p->seen.contains("start_index_map") &&
                      p->seen.contains("index_vector_dim"),
                  "offset_dims/collapsed_slice_dims/start_index_map/"
                  "index_vector_dim") &&
             need(p->seen.contains("slice_sizes"), "slice_sizes");
    case Opcode::kCompare:
      return need(p->direction.has_value(), "direction");
    case Opcode::kFusion:
      return need(p->fusion_kind.has_value(), "kind") &&
             need(p->has_calls, "calls");
    case Opcode::kCustomCall:
      return need(a.has_custom_call_target, "custom_call_target");
    case Opcode::kWhile:
      return need(p->condition != nullptr, "condition") &&
             need(p->body != nullptr, "body");
    case Opcode::kConditional: {
      bool pairs =
          p->true_computation != nullptr || p->false_computation != nullptr;
      if (pairs && p->has_branch_computations) {
        return Error(p->loc,
                     "conditional takes either true/false_computation or "
                     "branch_computations, not both");
      }
      if (pairs) {
        return need(p->true_computation != nullptr, "true_computation") &&
               need(p->false_computation != nullptr, "false_computation");
      }
      if (!p->operands.empty() &&
          p->operands[0]->shape().element_type() == PrimitiveType::kPred) {
        return Error(p->loc,
                     "a conditional with a pred index takes true_computation "
                     "and false_computation, not branch_computations");
      }
      return need(p->has_branch_computations, "branch_computations");
    }
    case Opcode::kSelectAndScatter:
      return need(p->select != nullptr, "select") &&
             need(p->scatter != nullptr, "scatter");
    case Opcode::kReducePrecision:
      return need(p->seen.contains("exponent_bits"), "exponent_bits") &&
             need(p->seen.contains("mantissa_bits"), "mantissa_bits");
    case Opcode::kRng:
      return need(p->seen.contains("distribution"), "distribution");
    case Opcode::kRngBitGenerator:
      return need(p->seen.contains("algorithm"), "algorithm");
    case Opcode::kRngGetAndUpdateState:
      return need(p->seen.contains("delta"), "delta");
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return need(p->seen.contains("epsilon"), "epsilon") &&
             need(p->seen.contains("feature_index"), "feature_index");
    case Opcode::kFft:
      return need(p->seen.contains("fft_type"), "fft_type") &&
             need(p->seen.contains("fft_length"), "fft_length");
    case Opcode::kTopK:
      return need(p->seen.contains("k"), "k");
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return need(a.has_source_target_pairs, "source_target_pairs");
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return need(p->dimensions.has_value(), "dimensions");
    case Opcode::kDomain:
      return need(!a.domain_text.empty(), "domain");
    case Opcode::kAsyncStart:
      return need(p->has_calls, "calls");
    default:
      return true;
  }
}

Instruction* Parser::Build(PendingInstruction* p) {
  Scope& scope = scopes_.back();
  const bool shorthand_start = p->wrapped && p->opcode == Opcode::kAsyncStart;
  if (!p->shape) {
    if (p->wrapped || !OpcodeShapeInferable(p->opcode)) {
      Error(p->loc,
            StrCat(OpcodeName(p->opcode), " needs an explicit result shape"));
      return nullptr;
    }
    // Inference for omitted shapes covers the common structural cases.
    Shape s;
    const auto& ops = p->operands;
    switch (p->opcode) {
      case Opcode::kTuple: {
        std::vector<Shape> el;
        for (Instruction* o : ops) el.push_back(o->shape());
        s = Shape::Tuple(std::move(el));
        break;
      }
      case Opcode::kGetTupleElement:
        if (ops.size() == 1 && ops[0]->shape().IsTuple() && p->int_attr >= 0 &&
            p->int_attr < ops[0]->shape().tuple_shapes_size()) {
          s = ops[0]->shape().tuple_shapes(p->int_attr);
        }
        break;
      case Opcode::kAfterAll:
        s = Shape::Token();
        break;
      case Opcode::kReplicaId:
      case Opcode::kPartitionId:
        s = Shape::Scalar(PrimitiveType::kU32);
        break;
      case Opcode::kCall:
        if (p->to_apply) s = p->to_apply->root_instruction()->shape();
        break;
      case Opcode::kWhile:
        if (!ops.empty()) s = ops[0]->shape();
        break;
      case Opcode::kCompare:
        if (!ops.empty() && ops[0]->shape().IsArray()) {
          s = Shape(PrimitiveType::kPred, ops[0]->shape().dimensions());
        }
        break;
      case Opcode::kConditional: {
        Computation* c =
            p->true_computation
                ? p->true_computation
                : (p->branch_computations.empty() ? nullptr
                                                  : p->branch_computations[0]);
        if (c) s = c->root_instruction()->shape();
        break;
      }
      default:
        if ((IsUnaryElementwise(p->opcode) || IsBinaryElementwise(p->opcode) ||
             p->opcode == Opcode::kCopy ||
             p->opcode == Opcode::kOptimizationBarrier) &&
            !ops.empty()) {
          s = ops[0]->shape();
          if (p->opcode == Opcode::kIsFinite) {
            s.set_element_type(PrimitiveType::kPred);
          } else if ((p->opcode == Opcode::kReal ||
                      p->opcode == Opcode::kImag ||
                      p->opcode == Opcode::kAbs) &&
                     IsComplexType(s.element_type())) {
            s.set_element_type(ComplexComponentType(s.element_type()));
          }
        } else if (IsTernaryElementwise(p->opcode) && ops.size() == 3) {
          s = ops[1]->shape();
        }
        break;
    }
    if (s.element_type() == PrimitiveType::kInvalid) {
      absl::StatusOr<Shape> inferred = InferOmittedShape(*p);
      if (!inferred.ok()) {
        Error(p->loc,
              StrCat("cannot infer the shape of ", OpcodeName(p->opcode), ": ",
                     inferred.status().message()));
        return nullptr;
      }
      s = *std::move(inferred);
      FillMissingLayouts(&s);
    }
    p->shape = std::move(s);
  }

  if ((p->opcode == Opcode::kRecv || p->opcode == Opcode::kInfeed) &&
      !p->shape->IsTuple()) {
    Error(p->loc, StrCat(OpcodeName(p->opcode),
                         " must have a tuple shape (data, token)"));
    return nullptr;
  }
  auto inst = std::make_unique<Instruction>(p->opcode, std::move(*p->shape));
  inst->set_name(std::move(p->name));
  int line, col;
  Locate(p->loc, &line, &col);
  inst->set_source_location(line, col);

  // The instruction that carries the opcode-specific attributes: the
  // wrapped one for async shorthand, else the instruction itself.
  std::unique_ptr<Instruction> wrapped_inst;
  Instruction* target = inst.get();
  if (shorthand_start) {
    const Shape& ss = inst->shape();
    if (!ss.IsTuple() || ss.tuple_shapes_size() < 2) {
      Error(p->loc,
            "an async start's shape must be a tuple ((operands), result, ...)");
      return nullptr;
    }
    wrapped_inst =
        std::make_unique<Instruction>(*p->wrapped, ss.tuple_shapes(1));
    wrapped_inst->set_name(StrCat(inst->name(), ".wrapped"));
    wrapped_inst->set_source_location(line, col);
    target = wrapped_inst.get();
  }
  if (p->dimensions) target->set_dimensions(*p->dimensions);
  if (p->has_int_attr) target->set_int_attr(p->int_attr);
  if (p->direction) target->set_comparison_direction(*p->direction);
  target->set_comparison_type(p->comparison_type);
  if (p->fusion_kind) target->set_fusion_kind(*p->fusion_kind);
  if (p->literal) target->set_literal(std::move(*p->literal));
  if (p->metadata) inst->set_metadata(std::move(*p->metadata));
  if (p->backend_config)
    target->set_backend_config(std::move(*p->backend_config));
  if (p->frontend_attributes) {
    inst->set_frontend_attributes(std::move(*p->frontend_attributes));
  }
  if (p->has_attrs) {
    if (shorthand_start) {
      // Async-level attributes stay on the start; the rest go to the
      // wrapped instruction.
      InstructionAttrs outer;
      outer.async_execution_thread =
          std::move(p->attrs().async_execution_thread);
      outer.sharding = std::move(p->attrs().sharding);
      outer.statistics_text = std::move(p->attrs().statistics_text);
      outer.origin_text = std::move(p->attrs().origin_text);
      p->attrs().async_execution_thread.clear();
      p->attrs().sharding.reset();
      p->attrs().statistics_text.clear();
      p->attrs().origin_text.clear();
      inst->set_attrs(std::move(outer));
    }
    target->set_attrs(std::move(p->attrs()));
  }
  // Called computations in the opcode's canonical order.
  std::vector<Computation*> called;
  const Opcode op = target->opcode();
  if (op == Opcode::kWhile) {
    called = {p->condition, p->body};
  } else if (op == Opcode::kConditional) {
    if (p->true_computation) {
      called = {p->true_computation, p->false_computation};
    } else {
      called = p->branch_computations;
    }
  } else if (op == Opcode::kSelectAndScatter) {
    called = {p->select, p->scatter};
  } else if (p->to_apply) {
    called = {p->to_apply};
  } else if (p->has_called_computations) {
    called = p->called_computations;
  } else if (p->has_calls) {
    called = p->calls;
  }
  if (p->to_apply && (p->has_calls || p->has_called_computations) &&
      op == Opcode::kCustomCall) {
    Error(p->loc,
          "custom-call takes to_apply or called_computations, not both");
    return nullptr;
  }
  target->set_called_computations(std::move(called));
  if (op == Opcode::kFusion) {
    for (Computation* c : target->called_computations()) {
      c->set_is_fusion_computation(true);
    }
  }

  if (shorthand_start) {
    // Build the wrapped computation: one parameter per operand.
    auto wc = std::make_unique<Computation>(module_->UniqueComputationName(
        StrCat("wrapped_", OpcodeName(*p->wrapped), "_computation")));
    std::vector<Instruction*> params;
    for (size_t i = 0; i < p->operands.size(); ++i) {
      auto param = std::make_unique<Instruction>(Opcode::kParameter,
                                                 p->operands[i]->shape());
      param->set_int_attr(static_cast<int64_t>(i));
      param->set_name(StrCat("param_", i));
      params.push_back(wc->AddInstruction(std::move(param)));
    }
    for (Instruction* prm : params) wrapped_inst->AppendOperand(prm);
    Instruction* root = wc->AddInstruction(std::move(wrapped_inst));
    wc->set_root_instruction(root);
    wc->set_is_async_wrapper(true);
    if (root->opcode() == Opcode::kFusion) {
      for (Computation* c : root->called_computations()) {
        c->set_is_fusion_computation(true);
      }
    }
    Computation* raw = module_->AddComputation(std::move(wc), false);
    computations_[raw->name()] = raw;
    inst->set_called_computations({raw});
  } else if ((p->opcode == Opcode::kAsyncUpdate ||
              p->opcode == Opcode::kAsyncDone)) {
    // update/done share the start's computation.
    if (!p->operands.empty() &&
        (p->operands[0]->opcode() == Opcode::kAsyncStart ||
         p->operands[0]->opcode() == Opcode::kAsyncUpdate)) {
      Computation* c = p->operands[0]->called_computations().empty()
                           ? nullptr
                           : p->operands[0]->called_computations()[0];
      const auto& prev_wrapped = p->operands[0]->attrs().async_wrapped_opcode;
      if (c == nullptr && p->wrapped && prev_wrapped == *p->wrapped) {
        inst->mutable_attrs()->async_wrapped_opcode = *p->wrapped;
      } else if (p->wrapped &&
                 (c == nullptr ||
                  c->root_instruction()->opcode() != *p->wrapped)) {
        Error(p->loc, StrCat("'", OpcodeName(*p->wrapped),
                             "' async shorthand does not match its start"));
        return nullptr;
      }
      if (p->has_calls && (p->calls.size() != 1 || p->calls[0] != c)) {
        Error(p->loc,
              "an async update/done must call the same computation as "
              "its async start");
        return nullptr;
      }
      if (c != nullptr) inst->set_called_computations({c});
    } else if (p->wrapped) {
      inst->mutable_attrs()->async_wrapped_opcode = *p->wrapped;
    }
  }

  if (inst->opcode() == Opcode::kParameter) {
    // Parameter numbers must be unique within a computation.
    const int64_t n = p->int_attr;
    if (n < scope.comp->num_parameters() &&
        scope.comp->parameter_instruction(n) != nullptr) {
      Error(p->loc, StrCat("parameter(", n, ") is defined more than once"));
      return nullptr;
    }
  }
  inst->mutable_operands_reserve(p->operands.size());
  for (Instruction* o : p->operands) inst->AppendOperand(o);
  Instruction* raw = scope.comp->AddInstruction(std::move(inst));
  for (Instruction* pred : p->control_predecessors) {
    (void)pred->AddControlDependencyTo(raw);
  }
  if (!DefineName(raw, p->loc)) return nullptr;
  scope.last = raw;
  return raw;
}

// ===========================================================================
// Shapes
// ===========================================================================

bool Parser::ParseShape(Shape* shape) {
  Depth depth(this);
  if (!depth.ok()) return false;
  if (tok_.kind == Tok::kLparen) {
    Advance();
    std::vector<Shape> elements;
    while (tok_.kind != Tok::kRparen) {
      Shape s;
      if (!ParseShape(&s)) return false;
      elements.push_back(std::move(s));
      if (!Accept(Tok::kComma)) break;
    }
    if (!Expect(Tok::kRparen, "')' to close the tuple shape")) return false;
    *shape = Shape::Tuple(std::move(elements));
    return true;
  }
  if (AtIdent("b")) {
    Advance();
    if (!Expect(Tok::kLparen, "'(' after 'b'")) return false;
    Shape inner;
    if (!ParseShape(&inner)) return false;
    if (!Expect(Tok::kRparen, "')'")) return false;
    if (!inner.IsArray())
      return Error("a buffer shape must wrap an array shape");
    *shape = Shape::Buffer(std::move(inner));
    return true;
  }
  if (tok_.kind != Tok::kPrimitiveType) return Error("expected a shape");
  PrimitiveType type = tok_.ptype;
  Advance();
  if (!Expect(Tok::kLsquare, "'[' after the element type")) return false;
  DimVector dims;
  std::vector<bool> dynamic;
  while (tok_.kind != Tok::kRsquare) {
    if (tok_.kind == Tok::kQuestion) {
      Advance();
      dims.push_back(Shape::kUnboundedSize);
      dynamic.push_back(true);
    } else {
      bool dyn = Accept(Tok::kLeq);
      int64_t d;
      const char* loc = tok_.begin;
      if (!ParseInt(&d)) return false;
      if (d < 0) return Error(loc, "dimension size must be non-negative");
      dims.push_back(d);
      dynamic.push_back(dyn);
    }
    if (!Accept(Tok::kComma)) break;
  }
  if (!Expect(Tok::kRsquare, "']' to close the dimensions")) return false;
  if (type == PrimitiveType::kToken || type == PrimitiveType::kOpaque) {
    if (!dims.empty())
      return Error("token and opaque shapes have no dimensions");
    *shape = type == PrimitiveType::kToken ? Shape::Token() : Shape::Opaque();
    return true;
  }
  if (dims.size() > 64) return Error("rank above 64 is not supported");
  *shape = Shape(type, std::move(dims));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i]) shape->set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  // A layout only if '{' is followed by an integer or ':'.
  if (tok_.kind == Tok::kLbrace) {
    Tok next = PeekKind();
    if (next == Tok::kInt || next == Tok::kColon) return ParseLayout(shape);
    if (next == Tok::kRbrace && shape->rank() == 0) {
      // "f32[]{}" is printed by some tools for scalars; accept it.
      Advance();
      Advance();
      return true;
    }
  }
  return true;
}

bool Parser::ParseLayout(Shape* shape) {
  Advance();  // '{'
  Layout* layout = shape->mutable_layout();
  layout->minor_to_major.clear();
  const char* loc = tok_.begin;
  while (tok_.kind == Tok::kInt) {
    int64_t v;
    if (!ParseInt(&v)) return false;
    layout->minor_to_major.push_back(v);
    if (!Accept(Tok::kComma)) break;
  }
  if (static_cast<int64_t>(layout->minor_to_major.size()) != shape->rank()) {
    return Error(
        loc, StrCat("layout has ", layout->minor_to_major.size(),
                    " dimension(s) but the shape has rank ", shape->rank()));
  }
  {
    std::vector<bool> seen(shape->rank(), false);
    for (int64_t d : layout->minor_to_major) {
      if (d < 0 || d >= shape->rank() || seen[d]) {
        return Error(
            loc,
            "layout minor_to_major must be a permutation of the dimensions");
      }
      seen[d] = true;
    }
  }
  if (Accept(Tok::kColon)) {
    int stage = 0;  // enforce the tail order
    auto order = [&](int s, std::string_view what) {
      if (s <= stage)
        return Error(StrCat("layout item '", what, "' is out of order"));
      stage = s;
      return true;
    };
    while (tok_.kind != Tok::kRbrace) {
      if (AtIdent("D")) {
        if (!order(1, "D")) return false;
        Advance();
        if (!Expect(Tok::kLparen, "'('")) return false;
        while (tok_.kind == Tok::kIdent) {
          Layout::DimLevelType d;
          std::string_view w = tok_.text;
          if (w == "D")
            d.level = Layout::DimLevel::kDense;
          else if (w == "C")
            d.level = Layout::DimLevel::kCompressed;
          else if (w == "S")
            d.level = Layout::DimLevel::kSingleton;
          else if (w == "H")
            d.level = Layout::DimLevel::kLooseCompressed;
          else
            return Error("expected a dim level type D, C, S or H");
          Advance();
          if (Accept(Tok::kPlus)) d.not_unique = true;
          if (Accept(Tok::kTilde)) d.not_ordered = true;
          layout->mutable_tail().dim_level_types.push_back(d);
          if (!Accept(Tok::kComma)) break;
        }
        if (!Expect(Tok::kRparen, "')'")) return false;
      } else if (AtIdent("T")) {
        if (!order(2, "T")) return false;
        Advance();
        if (tok_.kind != Tok::kLparen) return Error("expected '(' after 'T'");
        while (tok_.kind == Tok::kLparen) {
          Advance();
          Tile t;
          while (tok_.kind != Tok::kRparen) {
            if (Accept(Tok::kAsterisk)) {
              t.dims.push_back(Tile::kCombineDimension);
            } else {
              int64_t v;
              if (!ParseInt(&v)) return false;
              t.dims.push_back(v);
            }
            if (!Accept(Tok::kComma)) break;
          }
          if (!Expect(Tok::kRparen, "')'")) return false;
          layout->mutable_tail().tiles.push_back(std::move(t));
        }
      } else if (AtIdent("L")) {
        if (!order(3, "L")) return false;
        Advance();
        if (!Expect(Tok::kLparen, "'('") ||
            !ParseInt(
                &layout->mutable_tail().tail_padding_alignment_in_elements) ||
            !Expect(Tok::kRparen, "')'")) {
          return false;
        }
      } else if (tok_.kind == Tok::kOctothorp || tok_.kind == Tok::kAsterisk) {
        bool index = tok_.kind == Tok::kOctothorp;
        if (!order(index ? 4 : 5, index ? "#" : "*")) return false;
        Advance();
        if (!Expect(Tok::kLparen, "'('")) return false;
        if (tok_.kind != Tok::kPrimitiveType ||
            !IsUnsignedIntegralType(tok_.ptype)) {
          return Error("expected an unsigned integer type");
        }
        (index ? layout->mutable_tail().index_primitive_type
               : layout->mutable_tail().pointer_primitive_type) = tok_.ptype;
        Advance();
        if (!Expect(Tok::kRparen, "')'")) return false;
      } else if (AtIdent("E") || AtIdent("S") || AtIdent("M")) {
        char which = tok_.text[0];
        if (!order(which == 'E'   ? 6
                   : which == 'S' ? 7
                                  : 10,
                   std::string_view(&which, 1))) {
          return false;
        }
        Advance();
        int64_t v;
        if (!Expect(Tok::kLparen, "'('") || !ParseInt(&v) ||
            !Expect(Tok::kRparen, "')'")) {
          return false;
        }
        if (which == 'E') layout->mutable_tail().element_size_in_bits = v;
        if (which == 'S') layout->mutable_tail().memory_space = v;
        if (which == 'M')
          layout->mutable_tail().dynamic_shape_metadata_prefix_bytes = v;
      } else if (AtIdent("SC")) {
        if (!order(8, "SC")) return false;
        Advance();
        while (tok_.kind == Tok::kLparen) {
          Advance();
          SplitConfig sc;
          if (!ParseInt(&sc.dimension) || !Expect(Tok::kColon, "':'"))
            return false;
          while (tok_.kind == Tok::kInt) {
            int64_t v;
            if (!ParseInt(&v)) return false;
            sc.split_indices.push_back(v);
            if (!Accept(Tok::kComma)) break;
          }
          if (!Expect(Tok::kRparen, "')'")) return false;
          layout->mutable_tail().split_configs.push_back(std::move(sc));
        }
      } else if (AtIdent("P")) {
        if (!order(9, "P")) return false;
        Advance();
        if (!Expect(Tok::kLparen, "'('")) return false;
        Shape phys;
        if (!ParseShape(&phys)) return false;
        if (!Expect(Tok::kRparen, "')'")) return false;
        bool sparse = std::any_of(layout->tail().dim_level_types.begin(),
                                  layout->tail().dim_level_types.end(),
                                  [](const Layout::DimLevelType& d) {
                                    return d.level != Layout::DimLevel::kDense;
                                  });
        if (!sparse)
          return Error("a physical shape P(...) needs a sparse layout");
        layout->mutable_tail().physical_shape =
            std::make_shared<const Shape>(std::move(phys));
      } else {
        return Error("unexpected item in the layout");
      }
    }
  }
  return Expect(Tok::kRbrace, "'}' to close the layout");
}

bool Parser::ParseComputationLayout(ComputationLayout* l) {
  if (!Expect(Tok::kLbrace, "'{'") || !Expect(Tok::kLparen, "'('"))
    return false;
  while (tok_.kind != Tok::kRparen) {
    Shape s;
    if (!ParseShape(&s)) return false;
    l->parameters.push_back(std::move(s));
    if (!Accept(Tok::kComma)) break;
  }
  if (!Expect(Tok::kRparen, "')'") || !Expect(Tok::kArrow, "'->'"))
    return false;
  if (!ParseShape(&l->result)) return false;
  return Expect(Tok::kRbrace, "'}'");
}

// ===========================================================================
// Scalars and lists
// ===========================================================================

bool Parser::ParseInt(int64_t* v) {
  if (tok_.kind != Tok::kInt) return Error("expected an integer");
  if (tok_.int_overflow) return Error("integer out of range");
  *v = static_cast<int64_t>(tok_.int_bits);
  if (!tok_.int_negative && *v < 0) return Error("integer out of range");
  Advance();
  return true;
}

bool Parser::ParseBool(bool* v) {
  if (AtKeyword("true")) {
    *v = true;
  } else if (AtKeyword("false")) {
    *v = false;
  } else {
    return Error("expected true or false");
  }
  Advance();
  return true;
}

bool Parser::ParseDouble(double* v) {
  if (tok_.kind == Tok::kDecimal) {
    *v = tok_.decimal;
  } else if (tok_.kind == Tok::kInt) {
    *v = tok_.int_negative
             ? static_cast<double>(static_cast<int64_t>(tok_.int_bits))
             : static_cast<double>(tok_.int_bits);
  } else if (AtKeyword("inf")) {
    *v = INFINITY;
  } else if (tok_.kind == Tok::kNegInf) {
    *v = -INFINITY;
  } else {
    return Error("expected a number");
  }
  Advance();
  return true;
}

bool Parser::ParseString(std::string* s) {
  if (tok_.kind != Tok::kString) return Error("expected a string");
  *s = tok_.str;
  Advance();
  return true;
}

bool Parser::ParseEnumWord(std::string* w) {
  if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kString) {
    return Error("expected a word");
  }
  *w = tok_.kind == Tok::kString ? tok_.str : std::string(tok_.text);
  Advance();
  return true;
}

bool Parser::ParseBareIntList(Tok open, Tok close, std::vector<int64_t>* v) {
  if (!Expect(open, open == Tok::kLbrace    ? "'{'"
                    : open == Tok::kLsquare ? "'['"
                                            : "'('")) {
    return false;
  }
  v->clear();
  while (tok_.kind != close) {
    int64_t x;
    if (!ParseInt(&x)) return false;
    v->push_back(x);
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(close, close == Tok::kRbrace    ? "'}'"
                       : close == Tok::kRsquare ? "']'"
                                                : "')'");
}

bool Parser::ParseIntList(std::vector<int64_t>* v) {
  return ParseBareIntList(Tok::kLbrace, Tok::kRbrace, v);
}

bool Parser::ParseIntListList(std::vector<std::vector<int64_t>>* v) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  v->clear();
  while (tok_.kind != Tok::kRbrace) {
    std::vector<int64_t> inner;
    if (!ParseIntList(&inner)) return false;
    v->push_back(std::move(inner));
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

bool Parser::ParseShapeIndex(ShapeIndex* idx) {
  return ParseBareIntList(Tok::kLbrace, Tok::kRbrace, idx);
}

bool Parser::ParseBoolList(std::vector<bool>* v) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  while (tok_.kind != Tok::kRbrace) {
    bool b;
    if (!ParseBool(&b)) return false;
    v->push_back(b);
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

bool Parser::ParsePrecisionList(std::vector<Precision>* p) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind != Tok::kIdent) return Error("expected a precision");
    std::string w = ToLower(tok_.text);
    if (w == "default")
      p->push_back(Precision::kDefault);
    else if (w == "high")
      p->push_back(Precision::kHigh);
    else if (w == "highest")
      p->push_back(Precision::kHighest);
    else if (w == "packed_nibble")
      p->push_back(Precision::kPackedNibble);
    else
      return Error(StrCat("unknown precision '", tok_.text, "'"));
    Advance();
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

bool Parser::ParseRawBlock(std::string* out, bool normalize) {
  if (tok_.kind != Tok::kLbrace) return Error("expected '{'");
  lexer_.set_position(tok_.begin);
  std::string err;
  std::string_view block = lexer_.LexRawBraceBlock(&err);
  if (block.empty()) return Error(tok_.begin, err);
  *out = normalize ? NormalizeRaw(block) : std::string(block);
  Advance();
  return true;
}

// An attribute value the IR does not model: balanced tokens up to the next
// top-level ',' or the end of the line.
bool Parser::ParseRawValue(std::string* out) {
  const char* p = tok_.begin;
  const char* end = lexer_.buffer_end();
  if (tok_.kind == Tok::kEof) return Error("expected an attribute value");
  const char* start = p;
  int depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"' || c == '\'') {
      char q = c;
      ++p;
      while (p < end && *p != q) {
        if (*p == '\\') ++p;
        ++p;
      }
      if (p >= end)
        return Error(start, "unterminated string in attribute value");
      ++p;
      continue;
    }
    if (c == '\0') return Error(p, "NUL byte in input");
    if (c == '{' || c == '(' || c == '[') ++depth;
    if (c == '}' || c == ')' || c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (depth == 0 && (c == ',' || c == '\n')) break;
    ++p;
  }
  if (depth != 0) return Error(start, "unbalanced brackets in attribute value");
  std::string_view raw(start, p - start);
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  if (raw.empty()) return Error(start, "expected an attribute value");
  *out = NormalizeRaw(raw);
  lexer_.set_position(start + raw.size());
  Advance();
  return true;
}

// ===========================================================================
// Literals
// ===========================================================================

bool Parser::ParseLiteral(const Shape& shape, Literal* lit) {
  Depth depth(this);
  if (!depth.ok()) return false;
  if (shape.IsTuple()) {
    if (!Expect(Tok::kLparen, "'(' to open a tuple literal")) return false;
    *lit = Literal(Shape::Tuple({}));
    Literal tuple(shape);
    auto* elements = tuple.mutable_tuple_elements();
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0 && !Expect(Tok::kComma, "',' between tuple literal elements")) {
        return false;
      }
      if (!ParseLiteral(shape.tuple_shapes(i), &(*elements)[i])) return false;
    }
    if (!Expect(Tok::kRparen, "')' to close the tuple literal")) return false;
    *lit = std::move(tuple);
    return true;
  }
  if (shape.IsToken() || shape.IsOpaque() || shape.IsBuffer()) {
    return Error("a constant must have an array or tuple shape");
  }
  if (shape.is_unbounded_dynamic())
    return Error("constants cannot be unbounded");
  if (shape.rank() == 0) {
    *lit = Literal(shape);
    return ParseLiteralElement(lit, 0);
  }
  if (tok_.kind == Tok::kLbrace && PeekKind() == Tok::kDots) {
    Advance();
    Advance();
    if (!Expect(Tok::kRbrace, "'}' after '...'")) return false;
    *lit = Literal::Unknown(shape);
    return true;
  }
  // Constant data is materialized; cap it so hostile text cannot exhaust
  // memory (real dumps elide big constants as {...}).
  constexpr int64_t kMaxLiteralBytes = int64_t{1} << 30;
  const int64_t elements = shape.ElementsIn();
  if (elements >
      kMaxLiteralBytes / std::max(1, ByteWidth(shape.element_type()))) {
    return Error(StrCat("constant of shape ", shape.ToString(),
                        " is too large to materialize (limit 1 GiB); write it "
                        "as {...}"));
  }
  if (tok_.kind != Tok::kLbrace) {
    // A bare scalar is broadcast to the whole array (even an empty one), as
    // XLA's parser does. Parse it before allocating the array.
    Literal scalar(Shape::Scalar(shape.element_type()));
    if (!ParseLiteralElement(&scalar, 0)) return false;
    *lit = Literal(shape);
    const int64_t n = shape.ElementsIn();
    const size_t w = static_cast<size_t>(ByteWidth(shape.element_type()));
    uint8_t* data = lit->mutable_data();
    for (int64_t i = 0; i < n; ++i) std::memcpy(data + i * w, scalar.data(), w);
    return true;
  }
  *lit = Literal(shape);
  int64_t index = 0;
  return ParseLiteralArray(lit, 0, &index);
}

bool Parser::ParseLiteralArray(Literal* lit, int64_t dim, int64_t* index) {
  const Shape& shape = lit->shape();
  if (!Expect(Tok::kLbrace, "'{' in an array literal")) return false;
  const int64_t n = shape.dimensions(dim);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) Accept(Tok::kComma);  // commas are optional
    if (tok_.kind == Tok::kRbrace) {
      return Error(StrCat("array literal dimension ", dim, " has ", i,
                          " element(s) but the shape ", shape.ToString(),
                          " needs ", n));
    }
    if (dim + 1 < shape.rank()) {
      if (!ParseLiteralArray(lit, dim + 1, index)) return false;
    } else {
      if (!ParseLiteralElement(lit, (*index)++)) return false;
    }
  }
  if (tok_.kind == Tok::kComma) Advance();
  if (tok_.kind != Tok::kRbrace) {
    return Error(StrCat("array literal dimension ", dim, " has more than ", n,
                        " element(s) (shape ", shape.ToString(), ")"));
  }
  Advance();
  return true;
}

bool Parser::ParseLiteralElement(Literal* lit, int64_t index) {
  const PrimitiveType t = lit->shape().element_type();
  const char* loc = tok_.begin;
  if (t == PrimitiveType::kPred) {
    if (AtKeyword("true") || AtKeyword("false")) {
      lit->SetBits(index, AtKeyword("true") ? 1 : 0);
      Advance();
      return true;
    }
    if (tok_.kind == Tok::kInt) {
      lit->SetBits(index, tok_.int_bits != 0 ? 1 : 0);
      Advance();
      return true;
    }
    return Error("expected true, false or an integer for a pred literal");
  }
  if (IsIntegralType(t)) {
    if (tok_.kind != Tok::kInt) {
      return Error(StrCat("expected an integer for a ", PrimitiveTypeName(t),
                          " literal"));
    }
    const int bits = BitWidth(t);
    bool ok;
    if (tok_.int_overflow) {
      ok = false;
    } else if (IsSignedIntegralType(t)) {
      int64_t v = static_cast<int64_t>(tok_.int_bits);
      if (!tok_.int_negative && v < 0) {
        ok = false;
      } else if (bits == 64) {
        ok = true;
      } else {
        int64_t lo = -(int64_t{1} << (bits - 1)),
                hi = (int64_t{1} << (bits - 1)) - 1;
        ok = v >= lo && v <= hi;
      }
      if (ok) lit->SetFromInt64(index, v);
    } else {
      uint64_t v = tok_.int_bits;
      ok = !tok_.int_negative && (bits == 64 || v <= (uint64_t{1} << bits) - 1);
      if (ok) lit->SetBits(index, v);
    }
    if (!ok) {
      return Error(loc, StrCat("value ", tok_.text, " is out of range for ",
                               PrimitiveTypeName(t)));
    }
    Advance();
    return true;
  }
  auto parse_real = [&](PrimitiveType ft, uint64_t* bits) -> bool {
    double v;
    bool is_nan = false, nan_neg = false;
    int64_t payload = -1;
    if (tok_.kind == Tok::kDecimal && tok_.is_nan) {
      is_nan = true;
      nan_neg = tok_.nan_negative;
      payload = tok_.nan_payload;
      v = NAN;
    } else if (tok_.kind == Tok::kDecimal) {
      v = tok_.decimal;
    } else if (tok_.kind == Tok::kInt) {
      if (tok_.int_overflow) return Error("integer out of range");
      v = tok_.int_negative
              ? static_cast<double>(static_cast<int64_t>(tok_.int_bits))
              : static_cast<double>(tok_.int_bits);
      if (tok_.int_negative && tok_.int_bits == 0) v = -0.0;  // "-0"
    } else if (AtKeyword("inf")) {
      v = INFINITY;
    } else if (tok_.kind == Tok::kNegInf) {
      v = -INFINITY;
    } else {
      return Error(StrCat("expected a number for a ", PrimitiveTypeName(ft),
                          " literal"));
    }
    const char* at = tok_.begin;
    std::string text(tok_.begin, tok_.end);
    Advance();
    if (is_nan) {
      int mb, eb;
      bool ieee = true;
      if (ft == PrimitiveType::kF32) {
        mb = 23;
        eb = 8;
      } else if (ft == PrimitiveType::kF64) {
        mb = 52;
        eb = 11;
      } else {
        auto f = *SmallFloatFormat(ft);
        mb = f.mantissa_bits;
        eb = f.exponent_bits;
        ieee = f.has_inf;
        if (!f.has_nan) {
          return Error(at, StrCat(PrimitiveTypeName(ft), " has no NaN"));
        }
        if (!ieee) {
          if (payload >= 0) {
            return Error(at, StrCat(PrimitiveTypeName(ft),
                                    " does not support NaN payloads"));
          }
          FloatToBits(ft, nan_neg ? -NAN : NAN, bits);
          return true;
        }
      }
      uint64_t mant = payload < 0 ? (uint64_t{1} << (mb - 1))
                                  : static_cast<uint64_t>(payload);
      if (mant == 0 || mant >= (uint64_t{1} << mb)) {
        return Error(
            at, StrCat("NaN payload does not fit in ", PrimitiveTypeName(ft)));
      }
      *bits = (uint64_t{nan_neg} << (mb + eb)) |
              (((uint64_t{1} << eb) - 1) << mb) | mant;
      return true;
    }
    if (!FloatToBits(ft, v, bits)) {
      return Error(at, StrCat("value ", text, " is out of range for ",
                              PrimitiveTypeName(ft)));
    }
    return true;
  };
  if (IsFloatingPointType(t)) {
    uint64_t bits;
    if (!parse_real(t, &bits)) return false;
    lit->SetBits(index, bits);
    return true;
  }
  if (IsComplexType(t)) {
    PrimitiveType ct = ComplexComponentType(t);
    if (!Expect(Tok::kLparen, "'(' for a complex literal")) return false;
    uint64_t re, im;
    if (!parse_real(ct, &re)) return false;
    if (!Expect(Tok::kComma, "','")) return false;
    if (!parse_real(ct, &im)) return false;
    if (!Expect(Tok::kRparen, "')'")) return false;
    const int w = ByteWidth(ct);
    uint8_t* p = lit->mutable_data() + static_cast<size_t>(index) * 2 * w;
    std::memcpy(p, &re, w);
    std::memcpy(p + w, &im, w);
    return true;
  }
  return Error(
      StrCat("literals of type ", PrimitiveTypeName(t), " are not supported"));
}

bool Parser::ParseShapePrefixedLiteral(Literal* lit) {
  if (tok_.kind == Tok::kLparen) {
    // ( shape literal, shape literal )
    Advance();
    std::vector<Literal> elements;
    std::vector<Shape> shapes;
    while (tok_.kind != Tok::kRparen) {
      Literal e;
      if (!ParseShapePrefixedLiteral(&e)) return false;
      shapes.push_back(e.shape());
      elements.push_back(std::move(e));
      if (!Accept(Tok::kComma)) break;
    }
    if (!Expect(Tok::kRparen, "')'")) return false;
    Literal t(Shape::Tuple(shapes));
    *t.mutable_tuple_elements() = std::move(elements);
    *lit = std::move(t);
    return true;
  }
  Shape s;
  if (!ParseShape(&s)) return false;
  return ParseLiteral(s, lit);
}

// ===========================================================================
// Computations as attribute values
// ===========================================================================

bool Parser::ParseComputationRef(Computation** c) {
  if (tok_.kind == Tok::kLbrace) {
    // Inline body. Its instructions see only their own names.
    Computation* body =
        ParseInstructionList(module_->UniqueComputationName(StrCat(
                                 "inline_computation.", anon_counter_++)),
                             /*allow_signature=*/false);
    if (body == nullptr) return false;
    *c = body;
    return true;
  }
  if (tok_.kind != Tok::kPercentName && tok_.kind != Tok::kIdent) {
    return Error("expected a computation name");
  }
  auto it = computations_.find(std::string(tok_.text));
  if (it == computations_.end()) {
    return Error(StrCat("computation '", tok_.text,
                        "' is not defined (callees "
                        "must be defined before their callers)"));
  }
  *c = it->second;
  Advance();
  return true;
}

bool Parser::ParseComputationList(std::vector<Computation*>* cs) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  while (tok_.kind != Tok::kRbrace) {
    Computation* c;
    if (!ParseComputationRef(&c)) return false;
    cs->push_back(c);
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

// ===========================================================================
// Attribute values
// ===========================================================================

bool Parser::ParseMetadata(OpMetadata* m) {
  if (!Expect(Tok::kLbrace, "'{' to open metadata")) return false;
  absl::flat_hash_set<std::string> seen;
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind != Tok::kAttributeName)
      return Error("expected a metadata key");
    std::string key(tok_.text);
    const char* loc = tok_.begin;
    Advance();
    if (!seen.insert(key).second) {
      return Error(loc, StrCat("metadata key '", key, "' is repeated"));
    }
    auto int32 = [&](int32_t* out) {
      int64_t v;
      if (!ParseInt(&v)) return false;
      if (v < INT32_MIN || v > INT32_MAX)
        return Error(loc, "value out of range");
      *out = static_cast<int32_t>(v);
      return true;
    };
    bool ok;
    if (key == "op_type")
      ok = ParseString(&m->op_type);
    else if (key == "op_name")
      ok = ParseString(&m->op_name);
    else if (key == "source_file")
      ok = ParseString(&m->source_file);
    else if (key == "source_line")
      ok = int32(&m->source_line);
    else if (key == "source_end_line")
      ok = int32(&m->source_end_line);
    else if (key == "source_column")
      ok = int32(&m->source_column);
    else if (key == "source_end_column")
      ok = int32(&m->source_end_column);
    else if (key == "stack_frame_id")
      ok = int32(&m->stack_frame_id);
    else if (key == "deduplicated_name")
      ok = ParseString(&m->deduplicated_name);
    else if (key == "scheduling_name")
      ok = ParseString(&m->scheduling_name);
    else if (key == "metadata_payload")
      ok = ParseString(&m->metadata_payload);
    else if (key == "preserve_layout")
      ok = ParseBool(&m->preserve_layout);
    else if (key == "profile_type")
      ok = ParseIntList(&m->profile_type);
    else
      return Error(loc, StrCat("unknown metadata key '", key, "'"));
    if (!ok) return false;
    Accept(Tok::kComma);
  }
  return Expect(Tok::kRbrace, "'}' to close metadata");
}

bool Parser::ParseFrontendAttributes(FrontendAttributes* f) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind != Tok::kAttributeName) {
      return Error("expected a frontend attribute 'key='");
    }
    FrontendAttribute attr;
    attr.key = std::string(tok_.text);
    Advance();
    if (tok_.kind == Tok::kString) {
      attr.value = tok_.str;
      Advance();
    } else if (tok_.kind == Tok::kLbrace) {
      attr.raw = true;
      if (!ParseRawBlock(&attr.value)) return false;
    } else {
      return Error("expected a string or {...} as a frontend attribute value");
    }
    for (const auto& e : *f) {
      if (e.key == attr.key) {
        return Error(StrCat("frontend attribute '", attr.key, "' is repeated"));
      }
    }
    f->push_back(std::move(attr));
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

bool Parser::ParseSharding(Sharding* s) {
  if (tok_.kind != Tok::kLbrace)
    return Error("expected '{' to open a sharding");
  const char* open = tok_.begin;
  Advance();
  if (tok_.kind == Tok::kRbrace) {  // empty tuple sharding
    Advance();
    s->kind = Sharding::Kind::kTuple;
    return true;
  }
  if (tok_.kind == Tok::kLbrace) {
    s->kind = Sharding::Kind::kTuple;
    while (tok_.kind == Tok::kLbrace) {
      Sharding e;
      const char* eopen = tok_.begin;
      Advance();
      if (!ParseSingleSharding(&e, eopen)) return false;
      s->tuple_elements.push_back(std::move(e));
      if (!Accept(Tok::kComma)) break;
    }
    return Expect(Tok::kRbrace, "'}' to close the tuple sharding");
  }
  return ParseSingleSharding(s, open);
}

// Parses the body of {...} after its '{' up to and including '}'.
bool Parser::ParseSingleSharding(Sharding* s, const char* open) {
  if (AtIdent("mesh") || AtIdent("maximal_mesh")) {
    // Named sharding: keep the text of the whole block.
    lexer_.set_position(open);
    std::string err;
    std::string_view block = lexer_.LexRawBraceBlock(&err);
    if (block.empty()) return Error(open, err);
    s->kind = Sharding::Kind::kNamed;
    s->text = NormalizeRaw(block);
    Advance();
    return true;
  }
  bool have_kind = false;
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind == Tok::kEof || tok_.kind == Tok::kError) {
      return Error("unterminated sharding");
    }
    if (AtKeyword("replicated") || AtKeyword("manual") ||
        AtKeyword("unknown") || AtKeyword("unreduced") ||
        AtKeyword("maximal")) {
      if (have_kind) return Error("sharding has more than one kind");
      have_kind = true;
      std::string_view w = tok_.text;
      s->kind = w == "replicated"  ? Sharding::Kind::kReplicated
                : w == "manual"    ? Sharding::Kind::kManual
                : w == "unknown"   ? Sharding::Kind::kUnknown
                : w == "unreduced" ? Sharding::Kind::kUnreduced
                                   : Sharding::Kind::kMaximal;
      Advance();
    } else if (tok_.kind == Tok::kAttributeName && tok_.text == "device") {
      Advance();
      if (!ParseInt(&s->device)) return false;
    } else if (tok_.kind == Tok::kAttributeName && tok_.text == "devices") {
      if (have_kind) return Error("sharding has more than one kind");
      have_kind = true;
      s->kind = Sharding::Kind::kTiled;
      Advance();
      if (!ParseBareIntList(Tok::kLsquare, Tok::kRsquare, &s->tile_dims))
        return false;
      if (Accept(Tok::kLeq)) {
        s->iota = true;
        if (!ParseBareIntList(Tok::kLsquare, Tok::kRsquare,
                              &s->iota_reshape_dims)) {
          return false;
        }
        if (AtIdent("T")) {
          Advance();
          if (!ParseBareIntList(Tok::kLparen, Tok::kRparen,
                                &s->iota_transpose_perm)) {
            return false;
          }
        }
      } else {
        while (tok_.kind == Tok::kInt) {
          int64_t d;
          if (!ParseInt(&d)) return false;
          s->devices.push_back(d);
          if (tok_.kind != Tok::kComma || PeekKind() != Tok::kInt) break;
          Advance();
        }
      }
    } else if (AtKeyword("last_tile_dim_replicate")) {
      s->last_tile_dim_replicate = true;
      Advance();
    } else if (tok_.kind == Tok::kAttributeName &&
               tok_.text == "last_tile_dims") {
      Advance();
      if (!Expect(Tok::kLbrace, "'{'")) return false;
      while (tok_.kind != Tok::kRbrace) {
        if (tok_.kind != Tok::kKeyword && tok_.kind != Tok::kIdent) {
          return Error("expected manual, replicated, maximal or unreduced");
        }
        s->last_tile_dims.emplace_back(tok_.text);
        Advance();
        if (!Accept(Tok::kComma)) break;
      }
      if (!Expect(Tok::kRbrace, "'}'")) return false;
    } else if (AtKeyword("shard_as") || AtKeyword("shard_like")) {
      bool as = tok_.text == "shard_as";
      Advance();
      if (!ParseInt(as ? &s->shard_as : &s->shard_like)) return false;
    } else if (tok_.kind == Tok::kAttributeName && tok_.text == "metadata") {
      Advance();
      if (!ParseRawBlock(&s->metadata_text)) return false;
    } else {
      return Error("unexpected item in sharding");
    }
    Accept(Tok::kComma);
  }
  Advance();
  if (!have_kind) return Error(open, "sharding has no kind");
  if (s->kind == Sharding::Kind::kMaximal && s->device < 0) {
    return Error(open, "a maximal sharding needs exactly one device");
  }
  if (s->kind != Sharding::Kind::kMaximal && s->device >= 0) {
    return Error(open, "only a maximal sharding takes device=");
  }
  if (s->kind == Sharding::Kind::kTiled) {
    int64_t product = 1;
    for (int64_t d : s->tile_dims) product *= d;
    int64_t count = static_cast<int64_t>(s->devices.size());
    if (s->iota) {
      count = 1;
      for (int64_t d : s->iota_reshape_dims) count *= d;
      if (!s->iota_transpose_perm.empty() &&
          s->iota_transpose_perm.size() != s->iota_reshape_dims.size()) {
        return Error(open,
                     "iota transpose must have the rank of the reshape dims");
      }
    }
    if (count != product) {
      return Error(open, StrCat("sharding has ", count,
                                " devices but the tile "
                                "assignment needs ",
                                product));
    }
  }
  return true;
}

bool Parser::ParseWindow(Window* w) {
  if (!Expect(Tok::kLbrace, "'{' to open a window")) return false;
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::vector<int64_t>> pad;
  bool has_size = false;
  auto dxd = [&](std::vector<int64_t>* out) {
    out->clear();
    if (tok_.kind == Tok::kInt) {
      int64_t v;
      if (!ParseInt(&v)) return false;
      out->push_back(v);
      return true;
    }
    if (tok_.kind != Tok::kDxD) return Error("expected a size like 3x3");
    std::string_view t = tok_.text;
    size_t pos = 0;
    while (pos <= t.size()) {
      size_t x = t.find('x', pos);
      if (x == std::string_view::npos) x = t.size();
      int64_t v = 0;
      std::from_chars(t.data() + pos, t.data() + x, v);
      out->push_back(v);
      pos = x + 1;
    }
    Advance();
    return true;
  };
  while (tok_.kind != Tok::kRbrace) {
    if (tok_.kind != Tok::kAttributeName)
      return Error("expected a window field");
    std::string key(tok_.text);
    Advance();
    bool ok;
    if (key == "size") {
      has_size = true;
      ok = dxd(&size);
    } else if (key == "stride") {
      ok = dxd(&stride);
    } else if (key == "lhs_dilate") {
      ok = dxd(&lhs_dilate);
    } else if (key == "rhs_dilate") {
      ok = dxd(&rhs_dilate);
    } else if (key == "rhs_reversal") {
      ok = dxd(&reversal);
    } else if (key == "pad") {
      if (tok_.kind != Tok::kPad) return Error("expected padding like 0_0x1_1");
      ok = ParsePadToken(tok_.text, &pad, tok_.begin);
      Advance();
    } else {
      return Error(StrCat("unknown window field '", key, "'"));
    }
    if (!ok) return false;
    Accept(Tok::kComma);
  }
  const char* close = tok_.begin;
  Advance();
  if (!has_size && (!stride.empty() || !pad.empty() || !lhs_dilate.empty() ||
                    !rhs_dilate.empty() || !reversal.empty())) {
    return Error(close, "a window needs size=");
  }
  const size_t rank = size.size();
  auto check = [&](size_t n, std::string_view what) {
    if (n != 0 && n != rank) {
      return Error(close, StrCat("window ", what, " has ", n,
                                 " dimensions but size has ", rank));
    }
    return true;
  };
  if (!check(stride.size(), "stride") || !check(pad.size(), "pad") ||
      !check(lhs_dilate.size(), "lhs_dilate") ||
      !check(rhs_dilate.size(), "rhs_dilate") ||
      !check(reversal.size(), "rhs_reversal")) {
    return false;
  }
  w->dimensions.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    auto& d = w->dimensions[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      if (pad[i].size() != 2)
        return Error(close, "window padding takes low_high");
      d.padding_low = pad[i][0];
      d.padding_high = pad[i][1];
    }
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) d.window_reversal = reversal[i] != 0;
  }
  return true;
}

bool Parser::ParsePadToken(std::string_view text,
                           std::vector<std::vector<int64_t>>* groups,
                           const char* loc) {
  groups->clear();
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t x = text.find('x', pos);
    if (x == std::string_view::npos) x = text.size();
    std::string_view g = text.substr(pos, x - pos);
    std::vector<int64_t> vals;
    size_t p2 = 0;
    while (p2 <= g.size()) {
      size_t u = g.find('_', p2);
      if (u == std::string_view::npos) u = g.size();
      int64_t v = 0;
      auto r = std::from_chars(g.data() + p2, g.data() + u, v);
      if (r.ec != std::errc()) return Error(loc, "invalid padding value");
      vals.push_back(v);
      p2 = u + 1;
    }
    groups->push_back(std::move(vals));
    pos = x + 1;
  }
  return true;
}

bool Parser::ParsePadding(PaddingConfig* p) {
  if (tok_.kind != Tok::kPad) return Error("expected padding like 0_0x1_1_0");
  std::vector<std::vector<int64_t>> groups;
  if (!ParsePadToken(tok_.text, &groups, tok_.begin)) return false;
  for (const auto& g : groups) {
    PaddingDimension d;
    d.low = g[0];
    d.high = g.size() > 1 ? g[1] : 0;
    d.interior = g.size() > 2 ? g[2] : 0;
    p->push_back(d);
  }
  Advance();
  return true;
}

bool Parser::ParseDimLabels(ConvolutionDimensionNumbers* d) {
  if (tok_.kind != Tok::kDimLabels)
    return Error("expected dim labels like b01f_01io->b01f");
  std::string_view t = tok_.text;
  const char* loc = tok_.begin;
  size_t us = t.find('_');
  size_t arrow = t.find("->");
  std::string_view lhs = t.substr(0, us);
  std::string_view rhs = t.substr(us + 1, arrow - us - 1);
  std::string_view out = t.substr(arrow + 2);
  Advance();
  auto spatial_count = [](std::string_view s) {
    int n = 0;
    for (char c : s) n += (c >= '0' && c <= '9');
    return n;
  };
  const int ns = spatial_count(lhs);
  if (spatial_count(rhs) != ns || spatial_count(out) != ns) {
    return Error(loc,
                 "dim labels must have the same number of spatial dimensions");
  }
  auto fill = [&](std::string_view s, char a, char b, int64_t* da, int64_t* db,
                  std::vector<int64_t>* spatial) {
    *da = -1;
    *db = -1;
    spatial->assign(ns, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == a) {
        if (*da >= 0) return Error(loc, StrCat("dim labels repeat '", c, "'"));
        *da = static_cast<int64_t>(i);
      } else if (c == b) {
        if (*db >= 0) return Error(loc, StrCat("dim labels repeat '", c, "'"));
        *db = static_cast<int64_t>(i);
      } else if (c >= '0' && c <= '9') {
        int k = c - '0';
        if (k >= ns || (*spatial)[k] >= 0) {
          return Error(loc, "invalid spatial dimension in dim labels");
        }
        (*spatial)[k] = static_cast<int64_t>(i);
      } else if (c != '?') {
        return Error(loc, StrCat("unexpected '", c, "' in dim labels"));
      }
    }
    if (*da < 0 || *db < 0)
      return Error(loc, "dim labels miss a required dimension");
    return true;
  };
  if (!fill(lhs, 'b', 'f', &d->input_batch_dimension,
            &d->input_feature_dimension, &d->input_spatial_dimensions) ||
      !fill(rhs, 'i', 'o', &d->kernel_input_feature_dimension,
            &d->kernel_output_feature_dimension,
            &d->kernel_spatial_dimensions) ||
      !fill(out, 'b', 'f', &d->output_batch_dimension,
            &d->output_feature_dimension, &d->output_spatial_dimensions)) {
    return false;
  }
  d->input_rank = static_cast<int64_t>(lhs.size());
  d->kernel_rank = static_cast<int64_t>(rhs.size());
  d->output_rank = static_cast<int64_t>(out.size());
  return true;
}

bool Parser::ParseSlice(std::vector<SliceDimension>* s) {
  if (!Expect(Tok::kLbrace, "'{' to open slice ranges")) return false;
  while (tok_.kind != Tok::kRbrace) {
    if (!Expect(Tok::kLsquare, "'[' to open a slice range")) return false;
    SliceDimension d;
    if (!ParseInt(&d.start) || !Expect(Tok::kColon, "':'") ||
        !ParseInt(&d.limit)) {
      return false;
    }
    if (Accept(Tok::kColon) && !ParseInt(&d.stride)) return false;
    if (!Expect(Tok::kRsquare, "']'")) return false;
    s->push_back(d);
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

bool Parser::ParseReplicaGroups(ReplicaGroups* g) {
  if (AtIdent("mesh")) {
    // mesh[...] {axes}: keep as text up to the closing brace.
    const char* start = tok_.begin;
    const char* end = start;
    int depth = 0;
    bool seen_brace = false;
    while (tok_.kind != Tok::kEof && tok_.kind != Tok::kError) {
      if (tok_.kind == Tok::kLbrace || tok_.kind == Tok::kLsquare) ++depth;
      if (tok_.kind == Tok::kRbrace || tok_.kind == Tok::kRsquare) --depth;
      if (tok_.kind == Tok::kLbrace) seen_brace = true;
      end = tok_.end;
      Advance();
      if (depth == 0 && seen_brace) break;
    }
    g->form = ReplicaGroups::Form::kMesh;
    g->mesh_text = NormalizeRaw(std::string_view(start, end - start));
    return true;
  }
  if (tok_.kind == Tok::kLsquare) {
    g->form = ReplicaGroups::Form::kIota;
    std::vector<int64_t> gs;
    const char* loc = tok_.begin;
    if (!ParseBareIntList(Tok::kLsquare, Tok::kRsquare, &gs)) return false;
    if (gs.size() != 2)
      return Error(loc, "iota replica groups take [groups,size]");
    g->num_groups = gs[0];
    g->group_size = gs[1];
    if (!Expect(Tok::kLeq, "'<='")) return false;
    if (!ParseBareIntList(Tok::kLsquare, Tok::kRsquare,
                          &g->iota_reshape_dims)) {
      return false;
    }
    if (AtIdent("T")) {
      Advance();
      if (!ParseBareIntList(Tok::kLparen, Tok::kRparen,
                            &g->iota_transpose_perm)) {
        return false;
      }
    }
    int64_t n = 1;
    for (int64_t d : g->iota_reshape_dims) n *= d;
    if (n != g->num_groups * g->group_size) {
      return Error(loc,
                   "iota replica groups: the product of the reshape dims "
                   "must equal groups*size");
    }
    return true;
  }
  g->form = ReplicaGroups::Form::kExplicit;
  return ParseIntListList(&g->groups);
}

bool Parser::ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* a) {
  if (!Expect(Tok::kLbrace, "'{'")) return false;
  while (tok_.kind != Tok::kRbrace) {
    OutputOperandAlias e;
    if (!ParseShapeIndex(&e.output_index) || !Expect(Tok::kColon, "':'") ||
        !Expect(Tok::kLparen, "'('") || !ParseInt(&e.operand) ||
        !Expect(Tok::kComma, "','") || !ParseShapeIndex(&e.operand_index) ||
        !Expect(Tok::kRparen, "')'")) {
      return false;
    }
    a->push_back(std::move(e));
    if (!Accept(Tok::kComma)) break;
  }
  return Expect(Tok::kRbrace, "'}'");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ParseModule(
    std::string_view text, const ParseOptions& options) {
  Parser parser(text, options);
  return parser.Run();
}

absl::StatusOr<std::unique_ptr<Module>> ParseModuleFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open file"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  ParseOptions options;
  options.filename = path;
  return ParseModule(text, options);
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  ParseOptions options;
  Parser parser(text, options);
  Shape s;
  if (!parser.ParseShapeOnly(&s)) return parser.status();
  return s;
}

}  // namespace hlogym
