// libFuzzer target: parse arbitrary bytes; whatever parses must verify
// without crashing, print, and parse back to the same structure (the same
// DagHash). HLOGYM_FUZZ_LAX=1 in the environment only requires the printed
// text to parse.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hlogym/ir/dag_hash.h"
#include "hlogym/ir/verifier.h"
#include "hlogym/text/parser.h"
#include "hlogym/text/printer.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view printed,
                       std::string_view detail) {
  std::fprintf(stderr,
               "round-trip failure: %s\n%.*s\n--- printed text:\n%.*s\n", what,
               static_cast<int>(detail.size()), detail.data(),
               static_cast<int>(printed.size()), printed.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hlogym::ParseModule(text);
  if (!module.ok()) return 0;
  // The verifier may reject the module; it must not crash on it.
  (void)hlogym::VerifyModule(**module);
  const std::string printed = hlogym::PrintModule(**module);
  auto reparsed = hlogym::ParseModule(printed);
  if (!reparsed.ok()) {
    // absl::string_view is not std::string_view in Debian's absl.
    const std::string message(reparsed.status().message());
    Fail("the printed module does not parse", printed, message);
  }
  static const bool lax = std::getenv("HLOGYM_FUZZ_LAX") != nullptr;
  if (!lax && hlogym::DagHash(**module) != hlogym::DagHash(**reparsed)) {
    Fail("the printed module parses to a different structure", printed, "");
  }
  return 0;
}
