// `hlogym optimize` (an agent over a decision pipeline, reported against
// the xla-gpu baseline) and `hlogym bench-agents` (the same over a dataset).
#ifndef HLOGYM_TOOLS_OPTIMIZE_COMMAND_H_
#define HLOGYM_TOOLS_OPTIMIZE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace hlogym {

void AddOptimizeCommands(CLI::App& app);

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_OPTIMIZE_COMMAND_H_
