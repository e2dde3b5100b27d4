# HloGym: the two commands are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo python bench fuzz check-full format clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja:
	@bash scripts/install-deps.sh
	cmake -S . -B $(BUILD) -G Ninja -DHLOGYM_BUILD_PYTHON=ON $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: deps configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The main job: f-MCTS over general fusion on the transformer layer,
# reported against the xla-gpu baseline.
DEMO_BUDGET ?= 100
demo: build
	./$(BUILD)/hlogym optimize examples/transformer_encoder.hlo \
	  --pipeline general-fusion --agent fmcts --budget $(DEMO_BUDGET) --seed 0

# The Python package (build/python/hlogym); `make test` runs its tests.
python: deps configure
	cmake --build $(BUILD) -j$(JOBS) --target hlogym_python
	@echo "PYTHONPATH=$(BUILD)/python /usr/bin/python3 -c 'import hlogym'"

bench: build
	./$(BUILD)/hlogym_bench --benchmark_min_time=0.5

# Runs the parser fuzzer (clang + libFuzzer), seeded with the corpus.
FUZZ_SECONDS ?= 600
fuzz:
	@bash scripts/install-deps.sh --fuzz
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

# Heavier checks than CI: sanitizer build of every test, then the passes
# corpus tests (every alternative, pick-first fidelity), the fusion pipelines
# and subgraph extraction on the whole corpus, then the search agents on an
# inst-10-20 extraction (exhaustive beam search against brute force).
check-full:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DHLOGYM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo"
	$(MAKE) build
	HLOGYM_FULL_CORPUS=1 ./$(BUILD)/hlogym_corpus_tests --gtest_filter='PassesCorpus*:FusionCorpus*:ExtractCorpus*'
	./$(BUILD)/hlogym extract ../shared/corpus --min 10 --max 20 --out $(BUILD)/inst-10-20
	HLOGYM_AGENTS_DATASET=$(BUILD)/inst-10-20 ./$(BUILD)/hlogym_corpus_tests --gtest_filter='AgentsCorpus.ExhaustiveBeamMatchesBruteForce'

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD) build-asan build-fuzz
