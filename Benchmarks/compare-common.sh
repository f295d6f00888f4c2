# compare-common.sh: what compare.sh and compare-appbench.sh share, sourced by both: the
# command line, the prerequisites, the build of a SQLite baseline, limits.c and a benchmark
# product, and running one command into a results file.
#
# The sourcing script sets `script` (its name, for messages) and calls, in order:
#   parse_options "$@"               sets runs, roots, bench_dir (and repo_root)
#   prepare BASELINE.c PRODUCT       checks, makes $work, builds $work/BASELINE, $work/limits and
#                                    PRODUCT in release; sets product_binary
#   run_one NAME RESULTS COMMAND...  runs COMMAND, appends its last output line to RESULTS

runs=5
roots=100
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench_dir="${SEEDBENCH_DIR:-$repo_root/../shared/bench}"

usage() {
  echo "usage: $0 [--runs N] [--roots R] [--bench-dir DIR]" >&2
  exit 2
}

fail() {
  echo "$script: $*" >&2
  exit 1
}

parse_options() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --runs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage; runs="$2"; shift 2 ;;
      --roots) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage; roots="$2"; shift 2 ;;
      --bench-dir) [[ $# -ge 2 ]] || usage; bench_dir="$2"; shift 2 ;;
      -h | --help) usage ;;
      *) echo "$script: unknown argument $1" >&2; usage ;;
    esac
  done
}

prepare() {
  local baseline="$1" product="$2"
  [[ -d "$bench_dir" ]] || fail "the shared bench folder is missing: expected $bench_dir
  ($baseline and limits.c live there; pass --bench-dir DIR or set SEEDBENCH_DIR)"
  bench_dir="$(cd "$bench_dir" && pwd)"
  for file in "$baseline" limits.c; do
    [[ -f "$bench_dir/$file" ]] || fail "$bench_dir/$file is missing"
  done
  command -v cc >/dev/null || fail "no C compiler (cc) found: apt-get install -y build-essential"
  command -v swift >/dev/null || fail "swift is not on PATH"
  command -v python3 >/dev/null || fail "python3 is needed for the summary"
  if ! echo '#include <sqlite3.h>' | cc -E - >/dev/null 2>&1; then
    fail "libsqlite3-dev is missing (no sqlite3.h): apt-get install -y libsqlite3-dev"
  fi

  work="$(mktemp -d "${TMPDIR:-/tmp}/$product-compare.XXXXXX")"
  trap 'rm -rf "$work"' EXIT

  echo "== building (SQLite baseline, limits, $product release)"
  cc -O2 -o "$work/${baseline%.c}" "$bench_dir/$baseline" -lsqlite3 ||
    fail "could not build the SQLite baseline (is libsqlite3-dev installed?)"
  cc -O2 -o "$work/limits" "$bench_dir/limits.c" || fail "could not build limits.c"
  (cd "$repo_root" && swift build -c release --product "$product" >"$work/swift-build.log" 2>&1) ||
    { cat "$work/swift-build.log" >&2; fail "swift build of $product failed"; }
  product_binary="$(cd "$repo_root" && swift build -c release --show-bin-path)/$product"
}

# Runs a command and appends the last line of its standard output to a results file.
run_one() {
  local name="$1" results="$2"
  shift 2
  if ! "$@" >"$work/out" 2>"$work/err"; then
    cat "$work/out" "$work/err" >&2
    fail "$name failed"
  fi
  tail -n 1 "$work/out" >>"$results"
  cat "$work/err" >>"$work/$name.stderr"
}
