// `hlogym extract`: cut small subgraphs out of modules into a dataset
// folder of standalone .hlo files.
#ifndef HLOGYM_TOOLS_EXTRACT_COMMAND_H_
#define HLOGYM_TOOLS_EXTRACT_COMMAND_H_

#include "CLI/CLI.hpp"

namespace hlogym {

// Adds the subcommand to `app`; it runs from its callback (a failure ends
// parsing with exit status 1).
void AddExtractCommand(CLI::App& app);

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_EXTRACT_COMMAND_H_
