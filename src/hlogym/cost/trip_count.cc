#include "hlogym/cost/trip_count.h"

#include <cstdlib>
#include <string>

#include "hlogym/ir/computation.h"
#include "nlohmann/json.hpp"

namespace hlogym {
namespace {

__extension__ using Int128 = __int128;

std::optional<int64_t> KnownTripCount(const Instruction& w) {
  const std::string& config = w.backend_config();
  if (config.find("known_trip_count") == std::string::npos) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(config, nullptr,
                                           /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto k = j.find("known_trip_count");
  if (k == j.end() || !k->is_object()) return std::nullopt;
  auto n = k->find("n");
  if (n == k->end()) return std::nullopt;
  if (n->is_number_integer()) {
    const int64_t v = n->get<int64_t>();
    return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  if (n->is_string()) {
    const std::string s = n->get<std::string>();
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0' && v >= 0) return v;
  }
  return std::nullopt;
}

// The integer value of a scalar integer constant.
std::optional<int64_t> ScalarConstant(const Instruction* inst) {
  while (inst->opcode() == Opcode::kCopy ||
         inst->opcode() == Opcode::kBitcast) {
    if (inst->operand_count() != 1) return std::nullopt;
    inst = inst->operand(0);
  }
  if (inst->opcode() != Opcode::kConstant || !inst->has_literal()) {
    return std::nullopt;
  }
  const Literal& l = inst->literal();
  if (l.is_unknown() || !l.shape().IsArray() || l.element_count() != 1 ||
      !IsIntegralType(l.shape().element_type())) {
    return std::nullopt;
  }
  return l.GetAsInt64(0);
}

// get-tuple-element(param(0)), index=k -> k.
std::optional<int64_t> StateIndex(const Instruction* inst,
                                  const Computation* c) {
  if (inst->opcode() != Opcode::kGetTupleElement ||
      inst->operand_count() != 1) {
    return std::nullopt;
  }
  const Instruction* p = inst->operand(0);
  if (p->opcode() != Opcode::kParameter || c->num_parameters() != 1 ||
      c->parameter_instruction(0) != p) {
    return std::nullopt;
  }
  return inst->tuple_index();
}

// The constant value of element k of the loop's initial state.
std::optional<int64_t> InitValue(const Instruction* init, int64_t k) {
  if (init->opcode() == Opcode::kTuple) {
    if (k < 0 || k >= init->operand_count()) return std::nullopt;
    return ScalarConstant(init->operand(k));
  }
  if (init->opcode() == Opcode::kConstant && init->has_literal()) {
    const Literal& l = init->literal();
    if (k < 0 || k >= static_cast<int64_t>(l.tuple_elements().size())) {
      return std::nullopt;
    }
    const Literal& e = l.tuple_elements()[k];
    if (e.is_unknown() || !e.shape().IsArray() || e.element_count() != 1 ||
        !IsIntegralType(e.shape().element_type())) {
      return std::nullopt;
    }
    return e.GetAsInt64(0);
  }
  return std::nullopt;
}

ComparisonDirection Flip(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kLt:
      return ComparisonDirection::kGt;
    case ComparisonDirection::kLe:
      return ComparisonDirection::kGe;
    case ComparisonDirection::kGt:
      return ComparisonDirection::kLt;
    case ComparisonDirection::kGe:
      return ComparisonDirection::kLe;
    default:
      return d;
  }
}

// Iterations of `for (i = init; i DIR bound; i += step)`.
std::optional<int64_t> Count(Int128 init, Int128 bound, Int128 step,
                             ComparisonDirection dir) {
  auto floor_div = [](Int128 a, Int128 b) {
    Int128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  };
  Int128 n;
  switch (dir) {
    case ComparisonDirection::kLt:
      if (init >= bound) return 0;
      if (step <= 0) return std::nullopt;
      n = floor_div(bound - init + step - 1, step);
      break;
    case ComparisonDirection::kLe:
      if (init > bound) return 0;
      if (step <= 0) return std::nullopt;
      n = floor_div(bound - init, step) + 1;
      break;
    case ComparisonDirection::kGt:
      if (init <= bound) return 0;
      if (step >= 0) return std::nullopt;
      n = floor_div(init - bound + (-step) - 1, -step);
      break;
    case ComparisonDirection::kGe:
      if (init < bound) return 0;
      if (step >= 0) return std::nullopt;
      n = floor_div(init - bound, -step) + 1;
      break;
    case ComparisonDirection::kNe:
      if (init == bound) return 0;
      if (step == 0 || (bound - init) % step != 0 ||
          (bound - init) / step < 0) {
        return std::nullopt;
      }
      n = (bound - init) / step;
      break;
    default:
      return std::nullopt;
  }
  if (n < 0 || n > Int128(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(n);
}

}  // namespace

std::optional<int64_t> ComputeWhileTripCount(const Instruction& w) {
  if (w.opcode() != Opcode::kWhile) return std::nullopt;
  if (std::optional<int64_t> known = KnownTripCount(w)) return known;
  const Computation* cond = w.while_condition();
  const Computation* body = w.while_body();
  if (cond == nullptr || body == nullptr || w.operand_count() != 1) {
    return std::nullopt;
  }
  const Instruction* cmp = cond->root_instruction();
  if (cmp == nullptr || cmp->opcode() != Opcode::kCompare ||
      cmp->operand_count() != 2) {
    return std::nullopt;
  }
  ComparisonDirection dir = cmp->comparison_direction();
  std::optional<int64_t> k = StateIndex(cmp->operand(0), cond);
  std::optional<int64_t> bound = ScalarConstant(cmp->operand(1));
  if (!k || !bound) {
    k = StateIndex(cmp->operand(1), cond);
    bound = ScalarConstant(cmp->operand(0));
    dir = Flip(dir);
  }
  if (!k || !bound) return std::nullopt;

  // The body's update of element k: add/subtract of itself and a constant.
  const Instruction* root = body->root_instruction();
  if (root == nullptr || root->opcode() != Opcode::kTuple ||
      *k >= root->operand_count()) {
    return std::nullopt;
  }
  const Instruction* update = root->operand(*k);
  if ((update->opcode() != Opcode::kAdd &&
       update->opcode() != Opcode::kSubtract) ||
      update->operand_count() != 2) {
    return std::nullopt;
  }
  std::optional<int64_t> step;
  if (StateIndex(update->operand(0), body) == k) {
    step = ScalarConstant(update->operand(1));
  } else if (update->opcode() == Opcode::kAdd &&
             StateIndex(update->operand(1), body) == k) {
    step = ScalarConstant(update->operand(0));
  }
  if (!step) return std::nullopt;
  Int128 s = *step;
  if (update->opcode() == Opcode::kSubtract) s = -s;

  std::optional<int64_t> init = InitValue(w.operand(0), *k);
  if (!init) return std::nullopt;
  return Count(*init, *bound, s, dir);
}

}  // namespace hlogym
