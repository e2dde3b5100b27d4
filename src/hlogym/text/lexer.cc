#include "hlogym/text/lexer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "hlogym/ir/str_util.h"

namespace hlogym {
namespace {

inline bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsIdentChar(char c) {
  return IsIdentStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

constexpr std::array<std::string_view, 19> kKeywords = {
    "true",
    "false",
    "inf",
    "HloModule",
    "ENTRY",
    "ROOT",
    "FileNames",
    "FunctionNames",
    "FileLocations",
    "StackFrames",
    "maximal",
    "replicated",
    "manual",
    "last_tile_dim_replicate",
    "shard_as",
    "shard_like",
    "unknown",
    "unreduced",
    "nan"};

// Matches [chars]{2,} where chars is a small set; returns length or 0.
size_t MatchLabelRun(const char* p, const char* end, const char* set) {
  size_t n = 0;
  while (p + n < end && p[n] != '\0' && std::strchr(set, p[n]) != nullptr) ++n;
  return n >= 2 ? n : 0;
}

// dim labels: [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t MatchDimLabels(const char* p, const char* end) {
  static constexpr char kLhs[] = "0123456789bf?";
  static constexpr char kRhs[] = "0123456789io?";
  const char* q = p;
  size_t n = MatchLabelRun(q, end, kLhs);
  if (n == 0) return 0;
  q += n;
  if (q >= end || *q != '_') return 0;
  ++q;
  n = MatchLabelRun(q, end, kRhs);
  if (n == 0) return 0;
  q += n;
  if (end - q < 2 || q[0] != '-' || q[1] != '>') return 0;
  q += 2;
  n = MatchLabelRun(q, end, kLhs);
  if (n == 0) return 0;
  return static_cast<size_t>(q + n - p);
}

size_t MatchDigits(const char* p, const char* end) {
  size_t n = 0;
  while (p + n < end && IsDigit(p[n])) ++n;
  return n;
}

// -?((\d+|\d+[.]\d*|\d*[.]\d+)([eE][+-]?\d+))|-?(\d+[.]\d*|\d*[.]\d+)
size_t MatchDecimal(const char* p, const char* end) {
  const char* q = p;
  if (q < end && *q == '-') ++q;
  size_t int_digits = MatchDigits(q, end);
  q += int_digits;
  bool dot = false;
  size_t frac_digits = 0;
  if (q < end && *q == '.') {
    // "..." is never part of a number.
    if (q + 1 < end && q[1] == '.') return 0;
    dot = true;
    ++q;
    frac_digits = MatchDigits(q, end);
    q += frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  bool exp = false;
  if (q < end && (*q == 'e' || *q == 'E')) {
    const char* e = q + 1;
    if (e < end && (*e == '+' || *e == '-')) ++e;
    size_t ed = MatchDigits(e, end);
    if (ed > 0) {
      exp = true;
      q = e + ed;
    }
  }
  if (!dot && !exp) return 0;
  return static_cast<size_t>(q - p);
}

// [0-9]+(x[0-9]+)+
size_t MatchDxD(const char* p, const char* end) {
  const char* q = p;
  size_t n = MatchDigits(q, end);
  if (n == 0) return 0;
  q += n;
  int groups = 0;
  while (q < end && *q == 'x') {
    size_t m = MatchDigits(q + 1, end);
    if (m == 0) break;
    q += 1 + m;
    ++groups;
  }
  return groups > 0 ? static_cast<size_t>(q - p) : 0;
}

size_t MatchSignedDigits(const char* p, const char* end) {
  const char* q = p;
  if (q < end && *q == '-') ++q;
  size_t n = MatchDigits(q, end);
  return n == 0 ? 0 : static_cast<size_t>(q + n - p);
}

// One pad group: -?\d+_-?\d+(_-?\d+)?
size_t MatchPadGroup(const char* p, const char* end) {
  const char* q = p;
  size_t n = MatchSignedDigits(q, end);
  if (n == 0) return 0;
  q += n;
  if (q >= end || *q != '_') return 0;
  n = MatchSignedDigits(q + 1, end);
  if (n == 0) return 0;
  q += 1 + n;
  if (q < end && *q == '_') {
    n = MatchSignedDigits(q + 1, end);
    if (n > 0) q += 1 + n;
  }
  return static_cast<size_t>(q - p);
}

size_t MatchPad(const char* p, const char* end) {
  const char* q = p;
  size_t n = MatchPadGroup(q, end);
  if (n == 0) return 0;
  q += n;
  while (q < end && *q == 'x') {
    size_t m = MatchPadGroup(q + 1, end);
    if (m == 0) break;
    q += 1 + m;
  }
  return static_cast<size_t>(q - p);
}

}  // namespace

bool IsKeyword(std::string_view s) {
  for (std::string_view k : kKeywords) {
    if (k == s) return true;
  }
  return false;
}

void LineAndColumn(std::string_view text, const char* p, int* line, int* col) {
  int l = 1, c = 1;
  const char* end = text.data() + text.size();
  if (p > end) p = end;
  for (const char* q = text.data(); q < p; ++q) {
    if (*q == '\n') {
      ++l;
      c = 1;
    } else {
      ++c;
    }
  }
  *line = l;
  *col = c;
}

void Lexer::Error(Token* tok, const char* at, std::string msg) {
  tok->kind = Tok::kError;
  tok->begin = at;
  tok->end = at;
  tok->error = std::move(msg);
}

bool Lexer::SkipTrivia(std::string* error) {
  while (cur_ < end_) {
    char c = *cur_;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++cur_;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '/') {
      while (cur_ < end_ && *cur_ != '\n') ++cur_;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '*') {
      const char* start = cur_;
      cur_ += 2;
      while (cur_ + 1 < end_ && !(cur_[0] == '*' && cur_[1] == '/')) ++cur_;
      if (cur_ + 1 >= end_) {
        cur_ = start;
        *error = "unterminated /* comment";
        return false;
      }
      cur_ += 2;
    } else if (c == '\0') {
      *error = "NUL byte in input";
      return false;
    } else {
      break;
    }
  }
  return true;
}

void Lexer::Next(Token* tok) {
  std::string err;
  if (!SkipTrivia(&err)) {
    Error(tok, cur_, err);
    return;
  }
  tok->begin = cur_;
  tok->text = {};
  if (cur_ >= end_) {
    tok->kind = Tok::kEof;
    tok->end = cur_;
    return;
  }
  const char c = *cur_;
  auto punct = [&](Tok k, int len) {
    tok->kind = k;
    cur_ += len;
    tok->end = cur_;
  };
  switch (c) {
    case '=':
      return punct(Tok::kEqual, 1);
    case ',':
      return punct(Tok::kComma, 1);
    case ':':
      return punct(Tok::kColon, 1);
    case '*':
      return punct(Tok::kAsterisk, 1);
    case '#':
      return punct(Tok::kOctothorp, 1);
    case '+':
      return punct(Tok::kPlus, 1);
    case '~':
      return punct(Tok::kTilde, 1);
    case '[':
      return punct(Tok::kLsquare, 1);
    case ']':
      return punct(Tok::kRsquare, 1);
    case '{':
      return punct(Tok::kLbrace, 1);
    case '}':
      return punct(Tok::kRbrace, 1);
    case '(':
      return punct(Tok::kLparen, 1);
    case ')':
      return punct(Tok::kRparen, 1);
    case '<':
      if (cur_ + 1 < end_ && cur_[1] == '=') return punct(Tok::kLeq, 2);
      return Error(tok, cur_, "unexpected character '<'");
    case '.':
      if (end_ - cur_ >= 3 && cur_[1] == '.' && cur_[2] == '.') {
        return punct(Tok::kDots, 3);
      }
      return Error(tok, cur_, "unexpected character '.'");
    case '%':
      return LexPercent(tok);
    case '"':
    case '\'':
      return LexString(tok);
    case '-':
      if (cur_ + 1 < end_ && cur_[1] == '>') return punct(Tok::kArrow, 2);
      return LexNumberOrPattern(tok);
    case '?':
      if (MatchDimLabels(cur_, end_) == 0) return punct(Tok::kQuestion, 1);
      return LexNumberOrPattern(tok);
    default:
      break;
  }
  if (IsDigit(c)) return LexNumberOrPattern(tok);
  if (IsIdentStart(c)) return LexIdentifier(tok);
  if (static_cast<unsigned char>(c) >= 0x20 &&
      static_cast<unsigned char>(c) < 0x7f) {
    return Error(tok, cur_, StrCat("unexpected character '", c, "'"));
  }
  return Error(tok, cur_,
               StrCat("unexpected byte 0x",
                      "0123456789abcdef"[(static_cast<unsigned char>(c) >> 4)],
                      "0123456789abcdef"[static_cast<unsigned char>(c) & 15]));
}

void Lexer::LexPercent(Token* tok) {
  const char* start = cur_;
  ++cur_;
  if (cur_ >= end_ || !IsIdentStart(*cur_)) {
    // XLA also accepts names that start with a digit after '%'? It does
    // not: the name must start like an identifier.
    cur_ = start;
    return Error(tok, start, "expected a name after '%'");
  }
  const char* name = cur_;
  while (cur_ < end_ && IsIdentChar(*cur_)) ++cur_;
  tok->kind = Tok::kPercentName;
  tok->text = std::string_view(name, cur_ - name);
  tok->end = cur_;
}

void Lexer::LexIdentifier(Token* tok) {
  const char* start = cur_;
  while (cur_ < end_ && IsIdentChar(*cur_)) ++cur_;
  std::string_view ident(start, cur_ - start);
  tok->text = ident;
  if (cur_ < end_ && *cur_ == ':') {
    ++cur_;
    tok->kind = Tok::kName;
    tok->end = cur_;
    return;
  }
  if (cur_ < end_ && *cur_ == '=') {
    ++cur_;
    tok->kind = Tok::kAttributeName;
    tok->end = cur_;
    return;
  }
  if (ident != "tuple" && ident != "buffer") {
    if (auto t = ParsePrimitiveType(ident)) {
      tok->kind = Tok::kPrimitiveType;
      tok->ptype = *t;
      tok->end = cur_;
      return;
    }
  }
  if (ident == "nan") {
    tok->kind = Tok::kDecimal;
    tok->is_nan = true;
    tok->nan_negative = false;
    tok->nan_payload = -1;
    tok->decimal = NAN;
    if (cur_ + 3 < end_ && cur_[0] == '(' && cur_[1] == '0' &&
        (cur_[2] == 'x' || cur_[2] == 'X')) {
      const char* h = cur_ + 3;
      uint64_t v = 0;
      auto r = std::from_chars(h, end_, v, 16);
      if (r.ec != std::errc() || r.ptr >= end_ || *r.ptr != ')' ||
          v > (uint64_t{1} << 52)) {
        return Error(tok, cur_, "invalid NaN payload");
      }
      tok->nan_payload = static_cast<int64_t>(v);
      cur_ = r.ptr + 1;
    }
    tok->end = cur_;
    return;
  }
  if (IsKeyword(ident)) {
    tok->kind = Tok::kKeyword;
    tok->end = cur_;
    return;
  }
  if (size_t n = MatchDimLabels(start, end_); n > 0) {
    cur_ = start + n;
    tok->kind = Tok::kDimLabels;
    tok->text = std::string_view(start, n);
    tok->end = cur_;
    return;
  }
  tok->kind = Tok::kIdent;
  tok->end = cur_;
}

void Lexer::LexNumberOrPattern(Token* tok) {
  const char* start = cur_;
  if (size_t n = MatchDecimal(start, end_); n > 0) {
    double v = 0;
    auto r = std::from_chars(start, start + n, v);
    if (r.ec == std::errc::result_out_of_range) {
      // Too large for a double: an error wherever it is used. (Values
      // that underflow to zero are fine.)
      if (std::fabs(v) >= 1.0 || v == 0.0) {
        bool tiny = false;
        for (const char* q = start; q < start + n; ++q) {
          if ((*q == 'e' || *q == 'E') && q + 1 < start + n && q[1] == '-')
            tiny = true;
        }
        if (!tiny) return Error(tok, start, "number out of range for f64");
        v = 0.0;
      }
    } else if (r.ec != std::errc()) {
      return Error(tok, start, "invalid decimal number");
    }
    cur_ = start + n;
    tok->kind = Tok::kDecimal;
    tok->decimal = v;
    tok->is_nan = false;
    tok->text = std::string_view(start, n);
    tok->end = cur_;
    return;
  }
  // Tokens that keep their text: dim labels, DxD sizes, pad configs.
  auto pattern = [&](Tok kind, size_t n) {
    cur_ = start + n;
    tok->kind = kind;
    tok->text = std::string_view(start, n);
    tok->end = cur_;
  };
  if (size_t n = MatchDimLabels(start, end_); n > 0)
    return pattern(Tok::kDimLabels, n);
  if (size_t n = MatchDxD(start, end_); n > 0) return pattern(Tok::kDxD, n);
  if (size_t n = MatchPad(start, end_); n > 0) return pattern(Tok::kPad, n);
  if (size_t n = MatchSignedDigits(start, end_); n > 0) {
    const bool neg = *start == '-';
    const char* digits = neg ? start + 1 : start;
    uint64_t mag = 0;
    auto r = std::from_chars(digits, start + n, mag);
    cur_ = start + n;
    tok->kind = Tok::kInt;
    tok->text = std::string_view(start, n);
    tok->int_negative = neg;
    tok->int_overflow =
        r.ec != std::errc() || (neg && mag > (uint64_t{1} << 63));
    tok->int_bits = neg ? (~mag + 1) : mag;
    tok->end = cur_;
    return;
  }
  if (end_ - start >= 4 && std::string_view(start, 4) == "-inf" &&
      !(end_ - start > 4 && IsIdentChar(start[4]))) {
    cur_ = start + 4;
    tok->kind = Tok::kNegInf;
    tok->end = cur_;
    return;
  }
  if (end_ - start >= 4 && std::string_view(start, 4) == "-nan") {
    cur_ = start + 1;
    LexIdentifier(tok);
    if (tok->kind == Tok::kDecimal && tok->is_nan) {
      tok->nan_negative = true;
      tok->begin = start;
      return;
    }
    cur_ = start;
    return Error(tok, start, "invalid number");
  }
  return Error(tok, start, StrCat("unexpected character '", *start, "'"));
}

void Lexer::LexString(Token* tok) {
  const char quote = *cur_;
  const char* start = cur_;
  ++cur_;
  tok->str.clear();
  while (cur_ < end_ && *cur_ != quote) {
    char c = *cur_;
    if (c == '\\') {
      if (cur_ + 1 >= end_) break;
      char e = cur_[1];
      cur_ += 2;
      switch (e) {
        case 'n':
          tok->str.push_back('\n');
          break;
        case 't':
          tok->str.push_back('\t');
          break;
        case 'r':
          tok->str.push_back('\r');
          break;
        case 'a':
          tok->str.push_back('\a');
          break;
        case 'b':
          tok->str.push_back('\b');
          break;
        case 'f':
          tok->str.push_back('\f');
          break;
        case 'v':
          tok->str.push_back('\v');
          break;
        case '\\':
          tok->str.push_back('\\');
          break;
        case '\'':
          tok->str.push_back('\'');
          break;
        case '"':
          tok->str.push_back('"');
          break;
        case '?':
          tok->str.push_back('?');
          break;
        case 'x': {
          int v = 0, n = 0;
          while (cur_ < end_ && n < 2 &&
                 std::isxdigit(static_cast<unsigned char>(*cur_))) {
            char h = *cur_++;
            v = v * 16 + (IsDigit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
            ++n;
          }
          if (n == 0) {
            cur_ = start;
            return Error(tok, start, "invalid \\x escape in string");
          }
          tok->str.push_back(static_cast<char>(v));
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0', n = 1;
            while (cur_ < end_ && n < 3 && *cur_ >= '0' && *cur_ <= '7') {
              v = v * 8 + (*cur_++ - '0');
              ++n;
            }
            if (v > 255) {
              cur_ = start;
              return Error(tok, start, "octal escape out of range in string");
            }
            tok->str.push_back(static_cast<char>(v));
          } else {
            cur_ = start;
            return Error(tok, start,
                         StrCat("invalid escape '\\", e, "' in string"));
          }
      }
      continue;
    }
    if (c == '\0') {
      cur_ = start;
      return Error(tok, start, "NUL byte in string");
    }
    tok->str.push_back(c);
    ++cur_;
  }
  if (cur_ >= end_) {
    cur_ = start;
    return Error(tok, start, "unterminated string");
  }
  ++cur_;
  tok->kind = Tok::kString;
  tok->end = cur_;
}

std::string_view Lexer::LexRawBraceBlock(std::string* error) {
  if (!SkipTrivia(error)) return {};
  if (cur_ >= end_ || *cur_ != '{') {
    *error = "expected '{'";
    return {};
  }
  const char* start = cur_;
  int depth = 0;
  while (cur_ < end_) {
    char c = *cur_;
    if (c == '"') {
      ++cur_;
      while (cur_ < end_ && *cur_ != '"') {
        if (*cur_ == '\\' && cur_ + 1 < end_) ++cur_;
        ++cur_;
      }
      if (cur_ >= end_) break;
      ++cur_;
      continue;
    }
    if (c == '\0') {
      *error = "NUL byte in input";
      cur_ = start;
      return {};
    }
    if (c == '{') ++depth;
    if (c == '}') {
      --depth;
      if (depth == 0) {
        ++cur_;
        return std::string_view(start, cur_ - start);
      }
    }
    ++cur_;
  }
  cur_ = start;
  *error = "unbalanced '{' in raw block";
  return {};
}

}  // namespace hlogym
