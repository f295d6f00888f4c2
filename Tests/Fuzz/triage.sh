#!/usr/bin/env bash
# Prints, for each reproducer, the error line and the first frames in Sources/ObjectGraph:
# the signature to sort fuzzer findings by.
#
#   Tests/Fuzz/triage.sh FILE...
set -uo pipefail
cd "$(dirname "$0")/../.."
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" SWIFT_BACKTRACE=enable=no
for file in "$@"; do
  output=$(.build/fuzz/store-file-fuzzer "$file" 2>&1)
  echo "== $file"
  grep -m1 -E 'Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer: (timeout|out-of-memory)' \
    <<<"$output" | cut -c1-240
  grep -E ' in \$s11ObjectGraph.* /.*Sources/ObjectGraph/' <<<"$output" | head -n 3 \
    | sed -E 's/^ *(#[0-9]+) 0x[0-9a-f]+ in ([^ ]+) .*(Sources\/ObjectGraph\/[^ ]+)$/  \1 \3  \2/' \
    | while read -r number place symbol; do
      echo "  $number $place  $(swift demangle --simplified --compact "$symbol" | cut -c1-160)"
    done
done
