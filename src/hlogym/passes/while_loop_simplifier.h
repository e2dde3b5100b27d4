// WhileLoopSimplifier, after XLA's pass of the same name.
//
// Per while loop, the first rewrite that applies (dry mode offers each):
//  - trip count 0 (the condition is false on the init value) -> the init;
//  - trip count 1 -> the body inlined once with the init as its parameter;
//  - nested tuples in the loop state -> a loop over the flattened state;
//  - dead tuple elements (unused after the loop and by the condition, side
//    effects and the other elements, or passed through untouched and used
//    by nothing in the loop) -> a loop over the smaller state.
// Loops whose condition (or, when the body would be inlined, body) has side
// effects are kept. The trip count is known when the condition compares an
// integer induction variable with a constant, the variable's init is a
// constant and the body adds (or subtracts) a constant to it.
//
// The helpers below are shared with the other control-flow passes.
#ifndef HLOGYM_PASSES_WHILE_LOOP_SIMPLIFIER_H_
#define HLOGYM_PASSES_WHILE_LOOP_SIMPLIFIER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

class WhileLoopSimplifier : public Pass {
 public:
  std::string_view name() const override { return "while-loop-simplifier"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

namespace control_flow {

// Adds a new instruction somewhere (a computation being built, or a graph
// computation through the Rewriter) and returns it.
using AddFn = std::function<Instruction*(std::unique_ptr<Instruction>)>;
// Old instruction -> its value in the clone.
using InstructionMap = absl::flat_hash_map<const Instruction*, Instruction*>;

// True if the computation, or one it calls, has a side-effecting
// instruction.
bool HasSideEffect(const Computation& computation);

// Instructions a clone computes differently: `make` gives the value of an
// instruction for which `is_leaf` holds, without cloning its operands
// (nullptr: the value must not be needed).
struct LeafRule {
  std::function<bool(const Instruction*)> is_leaf;
  std::function<Instruction*(const Instruction*)> make;
};

// Clones, in post-order and through `add`, the instructions of `src` that
// `needed` depend on plus every side-effecting instruction (with what it
// depends on). Instructions already in `map` are not cloned: their mapped
// value is used instead (nullptr marks a value that must not be needed;
// needing it is an error). Parameters must be mapped or leaves. Clones get
// fresh module-unique names; control edges are not copied. Fills `map`.
absl::Status CloneNeededInstructions(const Computation& src,
                                     std::span<const Instruction* const> needed,
                                     InstructionMap& map, const AddFn& add,
                                     const LeafRule* leaves = nullptr);

// get-tuple-element and tuple instructions built through `add`.
Instruction* AddGte(const AddFn& add, Instruction* tuple, int64_t index);
Instruction* AddTuple(const AddFn& add, std::span<Instruction* const> elems);

// A computation under construction (not yet in the module).
class NewComputation {
 public:
  NewComputation(Module* module, std::string_view name);
  Computation* computation() const { return computation_.get(); }
  const AddFn& adder() const { return add_; }
  Instruction* AddParameter(int64_t number, const Shape& shape,
                            std::string_view name);
  // Sets the root and adds the computation to the module through `rw`.
  Computation* Finish(Rewriter& rw, Instruction* root);

 private:
  Module* module_;
  std::unique_ptr<Computation> computation_;
  AddFn add_;
};

// An AddFn that adds to a graph computation through the Rewriter.
AddFn RewriterAdder(Rewriter& rw, Computation* computation);

// A copy of `while_inst` (attributes kept) over `init`, with the given
// shape, condition and body, added to the while's computation.
absl::StatusOr<Instruction*> MakeWhile(Rewriter& rw,
                                       const Instruction* while_inst,
                                       const Shape& shape, Computation* cond,
                                       Computation* body, Instruction* init);

// True if the loop state holds buffers (used once only) or async values
// (async ops must see their start through the state): such loops are left
// alone.
bool CarriesAsyncOrBuffers(const Instruction* while_inst);

// The trip count of `while_inst` when it is 0 or 1 and provable (see the
// file comment); nullopt otherwise.
std::optional<int64_t> SmallTripCount(const Instruction* while_inst);

// The indices i whose body root operand i is get-tuple-element(param, i)
// (the body passes them through). Empty unless the root is a tuple.
std::vector<int64_t> PassedThroughIndices(const Computation& body);

}  // namespace control_flow
}  // namespace hlogym

#endif  // HLOGYM_PASSES_WHILE_LOOP_SIMPLIFIER_H_
