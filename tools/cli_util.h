// Small helpers shared by the CLI commands.
#ifndef HLOGYM_TOOLS_CLI_UTIL_H_
#define HLOGYM_TOOLS_CLI_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

namespace hlogym {

// Prints `message` on stderr; returns the exit status 1.
inline int Fail(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_CLI_UTIL_H_
