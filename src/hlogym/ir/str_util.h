// Small string helpers (concatenation with fast integer formatting).
#ifndef HLOGYM_IR_STR_UTIL_H_
#define HLOGYM_IR_STR_UTIL_H_

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace hlogym {

namespace str_internal {

inline void AppendOne(std::string* out, std::string_view s) { out->append(s); }
inline void AppendOne(std::string* out, const char* s) { out->append(s); }
inline void AppendOne(std::string* out, const std::string& s) {
  out->append(s);
}
inline void AppendOne(std::string* out, char c) { out->push_back(c); }
// Debian's absl::string_view is its own type (status messages use it).
template <typename T>
requires std::same_as<T, absl::string_view> &&
    (!std::same_as<absl::string_view, std::string_view>)void AppendOne(
        std::string* out, const T& s) {
  out->append(s.data(), s.size());
}
template <std::integral T>
requires(!std::same_as<T, char> &&
         !std::same_as<T, bool>) void AppendOne(std::string* out, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}
// Shortest text that reads back to the same value ("0.5", "1e-05").
template <std::floating_point T>
void AppendOne(std::string* out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}
inline void AppendOne(std::string* out, bool v) {
  out->append(v ? "true" : "false");
}

}  // namespace str_internal

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (str_internal::AppendOne(out, args), ...);
}

// "{1,2,3}" for any range of integers.
template <typename Range>
std::string IntListToString(const Range& v) {
  std::string s = "{";
  bool first = true;
  for (const auto& x : v) {
    if (!first) s.push_back(',');
    first = false;
    str_internal::AppendOne(&s, static_cast<int64_t>(x));
  }
  s.push_back('}');
  return s;
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string s;
  StrAppend(&s, args...);
  return s;
}

}  // namespace hlogym

#endif  // HLOGYM_IR_STR_UTIL_H_
