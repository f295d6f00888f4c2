#!/usr/bin/env bash
# Builds the store file fuzzer and runs it for SECONDS (default 120) on a copy of the
# checked-in seed corpus. Exits non-zero when libFuzzer finds a crash, a timeout or an
# out-of-memory input, after printing the reproducer's path.
#
#   Tests/Fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
#
# FUZZ_WORK (default .build/fuzz/work) holds the working corpus, the log and, per run, the
# reproducers; FUZZ_FINDINGS, when set, is a directory the reproducers are also copied to.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-120}"
shift || true

Tests/Fuzz/build.sh

work="${FUZZ_WORK:-.build/fuzz/work}"
artifacts="$work/artifacts/$(date +%Y%m%d-%H%M%S)"
log="$artifacts/fuzz.log"
mkdir -p "$work/corpus" "$artifacts"
cp Tests/Fuzz/corpus/* "$work/corpus/"

# The Swift runtime and Foundation keep process-lifetime caches that LeakSanitizer reports
# as leaks at exit; leaks are not what this target looks for.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# libFuzzer prints the stack of a trap; the Swift runtime's own backtracer would run first
# and trip AddressSanitizer reading its own stack.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}"

echo "fuzz: running for $seconds s (log: $log)"
set +e
.build/fuzz/store-file-fuzzer "$work/corpus" \
  -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 "$@" >"$log" 2>&1
status=$?
set -e
grep -E '^(INFO: Seed|INFO: Loaded|Done|stat::number_of_executed_units|stat::new_units)' \
  "$log" || true

reproducers=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' \
  -o -name 'oom-*' -o -name 'leak-*' -o -name 'slow-unit-*' \) | sort)
if [[ -n "$reproducers" || $status -ne 0 ]]; then
  grep -E -A24 '^(==[0-9]+==ERROR|.*Fatal error|SUMMARY|==[0-9]+== ERROR: libFuzzer)' "$log" \
    | head -n 60 || true
  echo "fuzz: libFuzzer exited with status $status; reproduce with"
  echo "  OBJECTGRAPH_FUZZ_VERBOSE=1 .build/fuzz/store-file-fuzzer FILE"
  while IFS= read -r file; do
    [[ -n "$file" ]] || continue
    echo "  reproducer: $file"
    if [[ -n "${FUZZ_FINDINGS:-}" ]]; then
      mkdir -p "$FUZZ_FINDINGS" && cp "$file" "$FUZZ_FINDINGS/"
    fi
  done <<<"$reproducers"
  exit 1
fi
echo "fuzz: no finding in $seconds s"
