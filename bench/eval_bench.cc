// Interpreter speed: the floors of docs/benchmarks.md (1M-element add,
// 256^3 dot, a 10-op elementwise fusion over 1M elements) plus reductions,
// transposes and a small graph, each timed through Interpreter::Run.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "hlogym/eval/inputs.h"
#include "hlogym/eval/interpreter.h"
#include "hlogym/text/parser.h"

namespace hlogym {
namespace {

struct Case {
  std::unique_ptr<Module> module;
  std::vector<Literal> inputs;
};

Case Make(const std::string& text) {
  Case c;
  auto m = ParseModule(text);
  if (!m.ok()) {
    std::fprintf(stderr, "bench module does not parse: %s\n",
                 std::string(m.status().message()).c_str());
    std::abort();
  }
  c.module = std::move(*m);
  auto in = GenerateInputs(ParameterShapes(*c.module->entry_computation()), 0);
  if (!in.ok()) std::abort();
  c.inputs = std::move(*in);
  return c;
}

void RunCase(benchmark::State& state, const Case& c) {
  Interpreter interp;
  for (auto _ : state) {
    auto out = interp.Run(*c.module, c.inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->data());
  }
}

void BM_AddF32_1M(benchmark::State& state) {
  static const Case c = Make(R"(
HloModule add
ENTRY e {
  a = f32[1048576] parameter(0)
  b = f32[1048576] parameter(1)
  ROOT r = f32[1048576] add(a, b)
})");
  RunCase(state, c);
}
BENCHMARK(BM_AddF32_1M)->Unit(benchmark::kMillisecond);

void BM_Dot256(benchmark::State& state) {
  static const Case c = Make(R"(
HloModule dot
ENTRY e {
  a = f32[256,256] parameter(0)
  b = f32[256,256] parameter(1)
  ROOT r = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  RunCase(state, c);
}
BENCHMARK(BM_Dot256)->Unit(benchmark::kMillisecond);

// Ten chained elementwise ops inside one loop fusion.
void BM_Fusion10_1M(benchmark::State& state) {
  static const Case c = Make(R"(
HloModule fusion10
fused {
  x = f32[1048576] parameter(0)
  y = f32[1048576] parameter(1)
  a = f32[1048576] add(x, y)
  b = f32[1048576] multiply(a, x)
  c = f32[1048576] subtract(b, y)
  d = f32[1048576] maximum(c, x)
  e = f32[1048576] exponential(d)
  f = f32[1048576] negate(e)
  g = f32[1048576] add(f, y)
  h = f32[1048576] tanh(g)
  i = f32[1048576] multiply(h, h)
  ROOT j = f32[1048576] add(i, x)
}
ENTRY e {
  p0 = f32[1048576] parameter(0)
  p1 = f32[1048576] parameter(1)
  ROOT f = f32[1048576] fusion(p0, p1), kind=kLoop, calls=fused
})");
  RunCase(state, c);
}
BENCHMARK(BM_Fusion10_1M)->Unit(benchmark::kMillisecond);

// Reduces f32[1024,1024] over dimension state.range(0): 1 sums rows
// (contiguous), 0 sums columns.
void BM_Reduce1024(benchmark::State& state) {
  static const Case* cases[2] = {nullptr, nullptr};
  const int64_t dim = state.range(0);
  if (cases[dim] == nullptr) {
    cases[dim] = new Case(Make(R"(
HloModule reduce
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024,1024] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(p, z), dimensions={)" +
                               std::to_string(dim) + "}, to_apply=sum\n}"));
  }
  RunCase(state, *cases[dim]);
}
BENCHMARK(BM_Reduce1024)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_Transpose1024(benchmark::State& state) {
  static const Case c = Make(R"(
HloModule transpose
ENTRY e {
  p = f32[1024,1024] parameter(0)
  ROOT t = f32[1024,1024] transpose(p), dimensions={1,0}
})");
  RunCase(state, c);
}
BENCHMARK(BM_Transpose1024)->Unit(benchmark::kMillisecond);

// A softmax over rows of a small matrix: the size of graphs search loops
// evaluate many times.
void BM_SoftmaxSmall(benchmark::State& state) {
  static const Case c = Make(R"(
HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[32,128] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[32] reduce(p, ninf), dimensions={1}, to_apply=max
  mb = f32[32,128] broadcast(m), dimensions={0}
  d = f32[32,128] subtract(p, mb)
  x = f32[32,128] exponential(d)
  z = f32[] constant(0)
  s = f32[32] reduce(x, z), dimensions={1}, to_apply=sum
  sb = f32[32,128] broadcast(s), dimensions={0}
  ROOT r = f32[32,128] divide(x, sb)
})");
  RunCase(state, c);
}
BENCHMARK(BM_SoftmaxSmall)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hlogym
