// `hlogym passes | run-pass | augment | apply | rewrite-loop`: passes, dry
// runs and decisions from the command line.
#ifndef HLOGYM_TOOLS_PASSES_COMMAND_H_
#define HLOGYM_TOOLS_PASSES_COMMAND_H_

#include "CLI/CLI.hpp"

namespace hlogym {

// Adds the subcommands to `app`; each runs from its callback (a failure
// ends parsing with exit status 1).
void AddPassesCommands(CLI::App& app);

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_PASSES_COMMAND_H_
