// `hlogym pipeline`: runs a named pipeline (xla-gpu, xla-gpu-legacy,
// general-fusion, single-fusion) and reports kernels and modelled time.
#ifndef HLOGYM_TOOLS_PIPELINE_COMMAND_H_
#define HLOGYM_TOOLS_PIPELINE_COMMAND_H_

#include "CLI/CLI.hpp"

namespace hlogym {

void AddPipelineCommand(CLI::App& app);

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_PIPELINE_COMMAND_H_
