// Parses XLA's HLO text format.
#ifndef HLOGYM_TEXT_PARSER_H_
#define HLOGYM_TEXT_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/ir/module.h"

namespace hlogym {

struct ParseOptions {
  // Used as the prefix of error locations ("file:line:col: message").
  std::string filename = "<text>";
  // Nesting limit for shapes, operands, literals and inline computations.
  int max_depth = 512;
};

// Parses a module (with or without a header), or a single instruction as
// XLA's parser does. Errors carry "file:line:col: message".
absl::StatusOr<std::unique_ptr<Module>> ParseModule(
    std::string_view text, const ParseOptions& options = {});

// Reads and parses a file; the filename goes into error locations.
absl::StatusOr<std::unique_ptr<Module>> ParseModuleFile(
    const std::string& path);

// Parses one shape ("f32[2,3]{1,0}", "(s32[], pred[])").
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_PARSER_H_
