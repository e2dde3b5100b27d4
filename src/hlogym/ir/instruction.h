// One HLO instruction: an opcode applied to operands, producing a shape.
#ifndef HLOGYM_IR_INSTRUCTION_H_
#define HLOGYM_IR_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "hlogym/ir/attributes.h"
#include "hlogym/ir/literal.h"
#include "hlogym/ir/opcode.h"
#include "hlogym/ir/shape.h"

namespace hlogym {

class Computation;
class Module;
class Instruction;

// The recipe of a fusion's body that is not built yet. Dry runs of fusion
// passes attach one to each candidate fusion instead of cloning its members
// into a fused computation, since most candidates are never chosen; the
// passes layer builds the body of a chosen one (see passes/fusion_ops.h).
// It refers to instructions of the fusion's own computation only.
class PendingFusionBody {
 public:
  virtual ~PendingFusionBody() = default;
  // The position of `inst` in its computation, as CloneWith indexes it.
  static int64_t SlotOf(const Instruction& inst);
  // A copy for a cloned computation: `clone_by_slot[i->slot]` is the
  // clone of instruction `i` of the original computation.
  virtual std::unique_ptr<PendingFusionBody> CloneWith(
      const std::vector<Instruction*>& clone_by_slot) const = 0;
};

// Operand and user lists: most instructions have at most two of each, so two
// slots are kept inline (no allocation per edge list).
using InstructionVector = absl::InlinedVector<Instruction*, 2>;

// Instructions are owned by their computation. Operand and user lists are
// kept consistent by every mutating method; control edges likewise.
//
// Rarely used attributes live in a copy-on-write InstructionAttrs block so
// that cloning a module shares them instead of copying strings and vectors.
class Instruction {
 public:
  // Two overloads rather than one by value: a shape passed by value is
  // copied and then moved, and moving inline dimensions copies them again.
  Instruction(Opcode opcode, const Shape& shape);
  Instruction(Opcode opcode, Shape&& shape);
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  // Does not check uniqueness; see Computation::AddInstruction.
  void set_name(std::string name) {
    name_ = std::move(name);
    Touch();
  }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) {
    unique_id_ = id;
    Touch();
  }

  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() {
    TouchHashed();
    return &shape_;
  }

  Computation* parent() const { return parent_; }

  // ---- Operands and users.
  int64_t operand_count() const {
    return static_cast<int64_t>(operands_.size());
  }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  const InstructionVector& operands() const { return operands_; }
  const InstructionVector& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  bool IsUserOf(const Instruction* producer) const;

  void mutable_operands_reserve(size_t n) { operands_.reserve(n); }
  // Appends an operand (the operand gains this instruction as user).
  void AppendOperand(Instruction* operand);
  // Replaces operand i; users lists are updated.
  absl::Status ReplaceOperandWith(int64_t i, Instruction* new_operand);
  // Makes `user` use `new_producer` wherever it used this instruction.
  absl::Status ReplaceUseWith(Instruction* user, Instruction* new_producer);
  // Redirects every user (and the root role) to `new_producer`. Shapes must
  // be compatible.
  absl::Status ReplaceAllUsesWith(Instruction* new_producer);
  // Removes operand i (the user edge goes if no other slot uses it).
  absl::Status RemoveOperandAt(int64_t i);
  // Removes every operand edge (used before deleting the instruction).
  void DetachOperands();

  // ---- Detached instructions: dry-mode candidates built off to the side.
  // A detached instruction may use graph instructions as operands, but they
  // do not list it as a user, so the graph looks untouched; edges between
  // detached instructions are kept in both directions.
  bool is_detached() const { return detached_; }
  // Unregisters this instruction from its attached operands' user lists.
  void Detach();
  // Registers it again with every operand.
  void Attach();

  // ---- Control dependencies.
  const std::vector<Instruction*>& control_predecessors() const {
    return control_ ? control_->predecessors : EmptyEdges();
  }
  const std::vector<Instruction*>& control_successors() const {
    return control_ ? control_->successors : EmptyEdges();
  }
  // Adds the edge this -> successor (both in the same computation).
  absl::Status AddControlDependencyTo(Instruction* successor);
  absl::Status RemoveControlDependencyTo(Instruction* successor);
  void DropAllControlDeps();

  // ---- Called computations, in the order the opcode defines them:
  // while: {condition, body}; conditional: branches (true, false for a pred
  // index); select-and-scatter: {select, scatter}; everything else: the
  // to_apply / calls / called_computations list.
  const std::vector<Computation*>& called_computations() const {
    return called_computations_;
  }
  void set_called_computations(std::vector<Computation*> c) {
    called_computations_ = std::move(c);
    TouchHashed();
  }
  void ReplaceCalledComputation(Computation* old_c, Computation* new_c);
  Computation* to_apply() const;
  Computation* while_condition() const;
  Computation* while_body() const;
  Computation* fused_computation() const;  // fusion: calls
  // A fusion whose fused computation is still to be built (it has no
  // called computation until then). Only dry-run candidates have one.
  bool has_pending_body() const { return pending_body_ != nullptr; }
  PendingFusionBody* pending_body() const { return pending_body_.get(); }
  void set_pending_body(std::unique_ptr<PendingFusionBody> body) {
    pending_body_ = std::move(body);
    Touch();
  }
  std::unique_ptr<PendingFusionBody> release_pending_body() {
    Touch();
    return std::move(pending_body_);
  }

  // ---- Frequent attributes, stored inline.
  // dimensions= (broadcast, transpose, reduce, reverse, concatenate, sort,
  // map, all-gather, ...).
  const DimVector& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  void set_dimensions(DimVector d) {
    dimensions_ = std::move(d);
    has_dimensions_ = true;
    TouchHashed();
  }
  bool has_dimensions() const { return has_dimensions_; }
  // parameter(N)
  int64_t parameter_number() const { return int_attr_; }
  // get-tuple-element index=N
  int64_t tuple_index() const { return int_attr_; }
  // iota iota_dimension=N
  int64_t iota_dimension() const { return int_attr_; }
  void set_int_attr(int64_t v) {
    int_attr_ = v;
    TouchHashed();
  }
  int64_t int_attr() const { return int_attr_; }
  ComparisonDirection comparison_direction() const { return direction_; }
  void set_comparison_direction(ComparisonDirection d) {
    direction_ = d;
    TouchHashed();
  }
  ComparisonType comparison_type() const { return comparison_type_; }
  void set_comparison_type(ComparisonType t) {
    comparison_type_ = t;
    TouchHashed();
  }
  FusionKind fusion_kind() const { return fusion_kind_; }
  void set_fusion_kind(FusionKind k) {
    fusion_kind_ = k;
    TouchHashed();
  }

  // constant
  bool has_literal() const { return literal_ != nullptr; }
  const Literal& literal() const;
  void set_literal(Literal literal);

  // metadata={...}
  const OpMetadata& metadata() const;
  bool has_metadata() const { return metadata_ != nullptr; }
  void set_metadata(OpMetadata m);
  void clear_metadata() {
    metadata_.reset();
    Touch();
  }

  // backend_config=...
  const std::string& backend_config() const;
  void set_backend_config(std::string config);

  // frontend_attributes={...}
  const FrontendAttributes& frontend_attributes() const;
  void set_frontend_attributes(FrontendAttributes attrs);

  // The rare attributes. mutable_attrs() copies the block if shared.
  const InstructionAttrs& attrs() const;
  InstructionAttrs* mutable_attrs();
  void set_attrs(InstructionAttrs attrs);

  // Where the instruction was defined in text (1-based; 0 if unknown).
  int32_t source_line() const { return source_line_; }
  int32_t source_column() const { return source_column_; }
  void set_source_location(int32_t line, int32_t col) {
    source_line_ = line;
    source_column_ = col;
    Touch();
  }

  // True for instructions with effects beyond their result (they must not
  // be removed even when unused).
  bool HasSideEffect() const;
  bool IsRoot() const;

  // Copies opcode, shape, name, attributes and called computations, with
  // `new_operands` as operands. Users and control edges are not copied.
  std::unique_ptr<Instruction> CloneWithNewOperands(
      const std::vector<Instruction*>& new_operands) const;

  // Scratch slot for algorithms (clone maps, visitation marks). Not part of
  // the instruction's value; not thread-safe.
  mutable int64_t scratch = 0;

  // DagHash's memo of this instruction's local hash (see dag_hash.cc): for
  // an instruction that calls no computation the whole hash, otherwise the
  // hash state before the callees' hashes. Valid for `operands` operands;
  // every setter of a hashed field forgets it, and clones copy it.
  struct LocalHashMemo {
    enum Kind : uint8_t { kNone, kBeforeCallees, kWhole };
    uint64_t value = 0;
    uint32_t operands = 0;
    Kind kind = kNone;
  };
  LocalHashMemo& local_hash_memo() const { return local_hash_memo_; }

 private:
  friend class Computation;
  friend class Module;
  friend class ReachabilityIndex;
  friend class PendingFusionBody;

  void RemoveUser(Instruction* user);
  void AddUser(Instruction* user);
  // Marks the parent computation changed (Computation::version): every
  // mutating method calls it.
  void Touch();
  // Touch() for a change to a field the local hash reads.
  void TouchHashed() {
    local_hash_memo_.kind = LocalHashMemo::kNone;
    Touch();
  }

  // Member order matters for speed: graph walks read the scratch slot,
  // opcode, parent and edge lists of many instructions, so those share the
  // first two cache lines (after `scratch`), ahead of the large shape.
  Opcode opcode_;
  ComparisonDirection direction_ = ComparisonDirection::kEq;
  ComparisonType comparison_type_ = ComparisonType::kDefault;
  FusionKind fusion_kind_ = FusionKind::kLoop;
  bool has_dimensions_ = false;
  bool detached_ = false;
  int32_t slot_ = -1;  // index in the parent's instruction vector
  Computation* parent_ = nullptr;
  InstructionVector operands_;
  InstructionVector users_;
  int64_t unique_id_ = -1;
  int64_t int_attr_ = 0;
  Shape shape_;
  std::string name_;
  int32_t source_line_ = 0;
  int32_t source_column_ = 0;
  mutable LocalHashMemo local_hash_memo_;
  // Control edges are rare: kept out of line so instructions stay small.
  struct ControlEdges {
    std::vector<Instruction*> predecessors;
    std::vector<Instruction*> successors;
  };
  static const std::vector<Instruction*>& EmptyEdges();
  ControlEdges& control() {
    if (!control_) control_ = std::make_unique<ControlEdges>();
    return *control_;
  }
  std::unique_ptr<ControlEdges> control_;
  std::unique_ptr<PendingFusionBody> pending_body_;
  std::vector<Computation*> called_computations_;
  DimVector dimensions_;
  std::shared_ptr<const Literal> literal_;
  std::shared_ptr<const OpMetadata> metadata_;
  std::shared_ptr<const InstructionAttrs> attrs_;
  std::shared_ptr<const std::string> backend_config_;
  std::shared_ptr<const FrontendAttributes> frontend_attributes_;
};

}  // namespace hlogym

#endif  // HLOGYM_IR_INSTRUCTION_H_
