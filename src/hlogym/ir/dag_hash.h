// Structural hashes of modules and instructions.
#ifndef HLOGYM_IR_DAG_HASH_H_
#define HLOGYM_IR_DAG_HASH_H_

#include <cstdint>
#include <memory>
#include <string>

#include "hlogym/ir/module.h"

namespace hlogym {

// A 64-bit hash of a module's computation graph: topology, opcodes, shapes
// and layouts, every opcode-specific attribute, constant values and called
// computations. It ignores instruction and computation names, unique ids,
// metadata, and the order of instructions and computations in the text.
// Operands are hashed in order, except for `alternatives`, whose candidate
// operands are combined order-independently. Deterministic across runs and
// platforms. Uses Instruction::scratch: do not hash the same module from
// two threads at once (different modules are fine).
uint64_t DagHash(const Module& module);

// A DagHash as it is printed and used in file names: 16 lower-case hex
// digits.
std::string DagHashHex(uint64_t hash);

// Hash of one computation as seen from its root (plus its side-effecting
// and otherwise unreachable instructions).
uint64_t DagHash(const Computation& computation);

// Structural hash of `inst` and its operands up to `hops` levels deep
// (hops = 0: the instruction alone; hops < 0: the whole operand cone). Used
// as a node fingerprint.
uint64_t InstructionHash(const Instruction& inst, int hops = -1);

// Hash of an instruction's own value: opcode, shape, attributes, literal,
// called computations (structurally), operand count; not its operands.
uint64_t LocalInstructionHash(const Instruction& inst);

// LocalInstructionHash with each called computation reduced to its size,
// parameter count and root opcode: cheap (callee bodies are not walked), for
// bucketing before an exact comparison of the callees.
uint64_t ShallowInstructionHash(const Instruction& inst);

}  // namespace hlogym

#endif  // HLOGYM_IR_DAG_HASH_H_
