#include "hlogym/passes/pass.h"

namespace hlogym {

void RegisterStructuralPasses(PassRegistry& registry) { (void)registry; }

}  // namespace hlogym
