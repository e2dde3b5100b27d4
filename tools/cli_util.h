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

// A DagHash as the CLI prints it: 16 lower-case hex digits.
inline std::string Hex16(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace hlogym

#endif  // HLOGYM_TOOLS_CLI_UTIL_H_
