// Tokenizer for the HLO text format (section 1 of the format notes).
#ifndef HLOGYM_TEXT_LEXER_H_
#define HLOGYM_TEXT_LEXER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hlogym/ir/primitive_type.h"

namespace hlogym {

enum class Tok : uint8_t {
  kEof,
  kError,
  kEqual,
  kComma,
  kColon,
  kAsterisk,
  kOctothorp,
  kPlus,
  kTilde,
  kLsquare,
  kRsquare,
  kLbrace,
  kRbrace,
  kLparen,
  kRparen,
  kArrow,     // ->
  kLeq,       // <=
  kQuestion,  // ?
  kDots,      // ...
  kIdent,
  kName,           // identifier immediately followed by ':' (colon eaten)
  kAttributeName,  // identifier immediately followed by '=' (eaten)
  kPercentName,    // %name; text holds the name without '%'
  kPrimitiveType,
  kKeyword,  // true false inf HloModule ENTRY ROOT ... (text holds it)
  kInt,
  kDecimal,
  kNegInf,
  kDimLabels,
  kDxD,
  kPad,
  kString,
};

struct Token {
  Tok kind = Tok::kEof;
  const char* begin = nullptr;  // source range of the token
  const char* end = nullptr;
  std::string_view text;  // identifier/name text (no '%', ':' or '=')
  std::string str;        // unescaped string value (kString)
  uint64_t int_bits = 0;  // kInt: value as two's complement bits
  bool int_negative = false;
  bool int_overflow = false;  // magnitude does not fit in 64 bits
  double decimal = 0;         // kDecimal
  bool is_nan = false;        // kDecimal that is a NaN
  bool nan_negative = false;
  int64_t nan_payload = -1;                       // -1: no explicit payload
  PrimitiveType ptype = PrimitiveType::kInvalid;  // kPrimitiveType
  std::string error;                              // kError message
};

class Lexer {
 public:
  explicit Lexer(std::string_view text)
      : buf_(text.data()), end_(text.data() + text.size()), cur_(buf_) {}

  // Lexes the next token into `tok`.
  void Next(Token* tok);
  // Position for save/restore (cheap lookahead).
  const char* position() const { return cur_; }
  void set_position(const char* p) { cur_ = p; }
  const char* buffer_begin() const { return buf_; }
  const char* buffer_end() const { return end_; }

  // Skips whitespace and comments; returns false on an unterminated
  // comment or a NUL byte (then *error is set).
  bool SkipTrivia(std::string* error);

  // Reads a brace-balanced block starting at the next non-space character,
  // which must be '{'. Double-quoted strings are skipped as units. Returns
  // the block text including braces, or an empty view on error.
  std::string_view LexRawBraceBlock(std::string* error);

 private:
  void LexIdentifier(Token* tok);
  void LexPercent(Token* tok);
  void LexNumberOrPattern(Token* tok);
  void LexString(Token* tok);
  void Error(Token* tok, const char* at, std::string msg);

  const char* buf_;
  const char* end_;
  const char* cur_;
};

// "file:line:col" of `p` inside `text` (1-based).
void LineAndColumn(std::string_view text, const char* p, int* line, int* col);

bool IsKeyword(std::string_view s);

}  // namespace hlogym

#endif  // HLOGYM_TEXT_LEXER_H_
