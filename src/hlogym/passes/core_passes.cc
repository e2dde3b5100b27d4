#include "hlogym/passes/pass.h"

namespace hlogym {

void RegisterCorePasses(PassRegistry& registry) { (void)registry; }

}  // namespace hlogym
