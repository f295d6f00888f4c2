#!/usr/bin/env bash
# Builds the libFuzzer target over the store file decoder into .build/fuzz/store-file-fuzzer:
# every file of Sources/ObjectGraph and of Tests/Fuzz compiled as one module (so the fuzzer
# reaches internal API), with libFuzzer and AddressSanitizer.
#
#   Tests/Fuzz/build.sh                 # -O, ASan
#   SANITIZERS=fuzzer Tests/Fuzz/build.sh   # without ASan (faster, finds only traps)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"

sanitizers="${SANITIZERS:-fuzzer,address}"
output=.build/fuzz
mkdir -p "$output"
sources=()
while IFS= read -r -d '' file; do sources+=("$file"); done < <(
  find "$PWD/Sources/ObjectGraph" "$PWD/Tests/Fuzz" -name '*.swift' -print0 | sort -z)

# Rebuild only when a source or this script is newer than the binary.
binary="$output/store-file-fuzzer"
stamp="$output/store-file-fuzzer.sanitizers"
if [[ -x "$binary" && "$(cat "$stamp" 2>/dev/null)" == "$sanitizers" ]] \
  && [[ -z "$(find "${sources[@]}" "$0" -newer "$binary" -print -quit)" ]]; then
  echo "fuzz: $binary is up to date"
  exit 0
fi

echo "fuzz: compiling ${#sources[@]} files (-sanitize=$sanitizers)"
# From the output directory: with -g the compiler leaves the module it makes for the debugger
# in the current directory.
(
  cd "$output"
  swiftc -O -g -sanitize="$sanitizers" -parse-as-library -module-name ObjectGraph \
    -swift-version 6 -wmo -num-threads "${FUZZ_BUILD_THREADS:-2}" \
    -module-cache-path module-cache "${sources[@]}" -o store-file-fuzzer \
    2> >(grep -v "Cannot export local symbol '__asan" >&2)
)
echo "$sanitizers" >"$stamp"
echo "fuzz: built $binary"
