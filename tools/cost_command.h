// `hlogym cost`: the analytical cost of a module on a GPU model.
#ifndef HLOGYM_TOOLS_COST_COMMAND_H_
#define HLOGYM_TOOLS_COST_COMMAND_H_

#include "CLI/CLI.hpp"

namespace hlogym {

// Adds the `cost` subcommand to `app`. It runs from its callback while the
// command line is parsed; a failure ends parsing with exit status 1.
void AddCostCommand(CLI::App& app);

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_COST_COMMAND_H_
