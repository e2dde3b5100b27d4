#!/usr/bin/env bash
# Builds the parser fuzzer with clang + libFuzzer (in build-fuzz) and runs it
# for SECONDS (default 600), seeded with the shared corpus and examples/.
# Exits 0 when no crash was found; a crashing input is kept under
# build-fuzz/artifacts/. The fuzzer also requires print + re-parse to keep
# the DagHash; HLOGYM_FUZZ_LAX=1 only requires the printed text to parse.
set -euo pipefail

SECONDS_TO_RUN="${1:-600}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${FUZZ_BUILD:-$ROOT/build-fuzz}"
# Seeds above this size only slow the fuzzer down.
MAX_LEN=65536

# Coverage instrumentation must reach the libraries, not only the fuzzer's
# own file, so it goes into the global flags.
# UBSan findings abort the run instead of scrolling past in the log.
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
SAN+=" -fno-omit-frame-pointer"
# The project's warning list may name GCC-only warnings.
SAN+=" -Wno-unknown-warning-option"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$SAN" \
  -DHLOGYM_BUILD_FUZZ=ON -DHLOGYM_BUILD_TESTS=OFF -DHLOGYM_BUILD_BENCH=OFF \
  >/dev/null
cmake --build "$BUILD" --target parser_fuzzer

SEEDS="$BUILD/seeds"
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$BUILD/corpus" "$BUILD/artifacts"
CORPUS_DIR="$ROOT/../shared/corpus"
if [ -d "$CORPUS_DIR" ]; then
  find "$CORPUS_DIR/hloenv" "$CORPUS_DIR/models" "$CORPUS_DIR/xla" \
    -name '*.hlo' -size -"$((MAX_LEN / 1024))"k -exec cp -t "$SEEDS" {} + \
    2>/dev/null || true
else
  echo "fuzz.sh: ../shared not found: seeding with examples/ only"
fi
cp "$ROOT"/examples/*.hlo "$SEEDS"/ 2>/dev/null || true
echo "fuzz.sh: $(find "$SEEDS" -type f | wc -l) seed files; running ${SECONDS_TO_RUN}s"

DICT=()
if [ -f "$ROOT/fuzz/hlo.dict" ]; then
  DICT=(-dict="$ROOT/fuzz/hlo.dict")
fi
# New inputs go to the first directory; the seeds are read only.
exec "$BUILD/parser_fuzzer" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=4096 \
  -max_len="$MAX_LEN" -print_final_stats=1 \
  -artifact_prefix="$BUILD/artifacts/" "${DICT[@]}" \
  "$BUILD/corpus" "$SEEDS"
