// Prints modules in XLA's HLO text format.
#ifndef HLOGYM_TEXT_PRINTER_H_
#define HLOGYM_TEXT_PRINTER_H_

#include <string>

#include "hlogym/ir/module.h"

namespace hlogym {

struct PrintOptions {
  bool print_metadata = true;
  // Write operands as `f32[4]{0} %x` instead of `%x` (older dumps do).
  bool print_operand_shapes = false;
  bool print_percent = true;  // '%' before names
  bool print_backend_config = true;
  bool print_large_constants = true;    // false: elide big constants as {...}
  bool print_index_annotations = true;  // /*index=5*/
  bool print_computation_signature = true;
  // Canonical: names replaced by their post-order position (tmp_N,
  // comp_N), metadata and ids dropped; used for structural comparison.
  bool canonical = false;

  static PrintOptions Default() { return {}; }
  // `hlogym print --short`: no metadata, no operand shapes, no '%'.
  static PrintOptions Short() {
    PrintOptions o;
    o.print_metadata = false;
    o.print_operand_shapes = false;
    o.print_percent = false;
    o.print_index_annotations = false;
    return o;
  }
};

std::string PrintModule(const Module& module,
                        const PrintOptions& options = PrintOptions::Default());
void AppendModule(const Module& module, const PrintOptions& options,
                  std::string* out);
std::string PrintComputation(const Computation& computation,
                             const PrintOptions& options = {});
std::string PrintInstruction(const Instruction& inst,
                             const PrintOptions& options = {});

// Attribute and value printers shared with diagnostics.
std::string ShardingToString(const Sharding& sharding);
std::string WindowToString(const Window& window);
std::string ConvolutionDimensionNumbersToString(
    const ConvolutionDimensionNumbers& dnums);
std::string ReplicaGroupsToString(const ReplicaGroups& groups);
std::string MetadataToString(const OpMetadata& metadata);
std::string PaddingConfigToString(const PaddingConfig& padding);
// C-escaped, double-quoted.
std::string QuoteString(std::string_view s);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_PRINTER_H_
