// Early-return helpers for absl::Status / absl::StatusOr code.
#ifndef HLOGYM_IR_STATUS_MACROS_H_
#define HLOGYM_IR_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOGYM_CONCAT_INNER(a, b) a##b
#define HLOGYM_CONCAT(a, b) HLOGYM_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if it is not OK.
#define HLOGYM_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status hlogym_status_ = (expr);          \
    if (!hlogym_status_.ok()) return hlogym_status_; \
  } while (0)

// HLOGYM_ASSIGN_OR_RETURN(auto x, MakeX()); returns the error if any.
#define HLOGYM_ASSIGN_OR_RETURN(lhs, expr)                                     \
  HLOGYM_ASSIGN_OR_RETURN_IMPL(HLOGYM_CONCAT(hlogym_statusor_, __LINE__), lhs, \
                               expr)
#define HLOGYM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#endif  // HLOGYM_IR_STATUS_MACROS_H_
