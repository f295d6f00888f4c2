#!/usr/bin/env bash
# Runs the randomized test suites (those whose generators start from `TestScale.seed`) under
# soak numbers FIRST to LAST (default 1 to 20), each number giving every such test random
# sequences of its own (`OBJECTGRAPH_TEST_SEED`). Builds the tests once; stops at the first
# number a test fails under, printing the command that reruns it. Not part of CI: a soak
# looks for the rare interleaving or list edit the fixed seeds do not meet.
#
#   Tests/soak.sh [FIRST] [LAST]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
first="${1:-1}"
last="${2:-20}"

# Each such file holds a suite of its name.
suites=$(grep -rl "TestScale.seed(" Tests/ObjectGraphTests --include='*Tests.swift' |
  xargs -n1 basename | sed 's/\.swift$//' | sort | paste -sd'|' -)

swift build --build-tests
for ((seed = first; seed <= last; seed++)); do
  started=$SECONDS
  if ! OBJECTGRAPH_TEST_SEED=$seed swift test --skip-build --parallel --filter "$suites" \
    >".build/soak-$seed.log" 2>&1; then
    grep -E "✘|error|failed" ".build/soak-$seed.log" | head -40
    echo "soak: failed under OBJECTGRAPH_TEST_SEED=$seed (log: .build/soak-$seed.log); rerun:"
    echo "  OBJECTGRAPH_TEST_SEED=$seed swift test --skip-build --filter '$suites'"
    exit 1
  fi
  echo "soak: seed $seed passed in $((SECONDS - started)) s"
done
