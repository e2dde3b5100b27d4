// CallInliner: replaces `call` instructions by the body of their callee.
#ifndef HLOGYM_PASSES_CALL_INLINER_H_
#define HLOGYM_PASSES_CALL_INLINER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "hlogym/passes/pass.h"

namespace hlogym {

// Inlines every `call` without a backend config whose frontend attributes
// allow it, callees first. Apply mode then removes the callees nobody calls
// any more.
class CallInliner : public Pass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> RunWith(Module* module, Rewriter& rw) override;
};

}  // namespace hlogym

#endif  // HLOGYM_PASSES_CALL_INLINER_H_
