// Trip counts of while loops.
#ifndef HLOGYM_COST_TRIP_COUNT_H_
#define HLOGYM_COST_TRIP_COUNT_H_

#include <cstdint>
#include <optional>

#include "hlogym/ir/instruction.h"

namespace hlogym {

// The number of iterations of a while loop, when it can be proven:
//  * a backend_config {"known_trip_count":{"n":"N"}} gives it directly;
//  * otherwise the loop must have an integer induction variable: tuple
//    element k of the state starts at a constant (the init tuple's element
//    k is a constant), the body sets it to element k plus or minus a
//    constant, and the condition's root compares element k with a constant
//    (lt, le, gt, ge or ne, either operand order).
// nullopt when neither applies or the loop would not terminate.
std::optional<int64_t> ComputeWhileTripCount(const Instruction& while_inst);

}  // namespace hlogym

#endif  // HLOGYM_COST_TRIP_COUNT_H_
