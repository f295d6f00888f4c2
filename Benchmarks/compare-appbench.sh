#!/usr/bin/env bash
# compare-appbench.sh: appbench on ObjectGraph against the raw-SQLite baseline, on this machine.
#
#   Benchmarks/compare-appbench.sh [--runs N] [--roots R] [--bench-dir DIR]
#
# Builds the SQLite baseline (sqlite_appbench.c) and limits.c from the shared bench folder
# (default: ../shared/bench beside the repository, or $SEEDBENCH_DIR) and appbench in release,
# runs the two alternately N times (default 5) at R roots (default 100), each full run followed
# by its first screen in a fresh process, checks that their results agree with each other, and
# prints per phase the median of each, the ratio ObjectGraph/SQLite and the brief's target, then
# file size, peak RSS and the machine's durable-write floor (limits.c).
set -euo pipefail

script=compare-appbench.sh
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"
parse_options "$@"
prepare sqlite_appbench.c appbench
appbench="$product_binary"

# --- Run -----------------------------------------------------------------------------------

echo "== $runs alternating runs at --roots $roots (each full run, then its first screen)"
for ((run = 1; run <= runs; run++)); do
  printf '   run %d/%d: sqlite' "$run" "$runs"
  run_one sqlite "$work/sqlite.jsonl" \
    "$work/sqlite_appbench" --roots "$roots" --path "$work/baseline.db"
  run_one sqlite-screen "$work/sqlite-screen.jsonl" \
    "$work/sqlite_appbench" --first-screen --path "$work/baseline.db"
  printf ', objectgraph'
  run_one objectgraph "$work/objectgraph.jsonl" \
    "$appbench" --roots "$roots" --path "$work/objectgraph.ogstore"
  run_one objectgraph-screen "$work/objectgraph-screen.jsonl" \
    "$appbench" --first-screen --path "$work/objectgraph.ogstore"
  printf ', limits\n'
  (cd "$work" && ./limits) >>"$work/limits.txt" || fail "limits failed"
  rm -f "$work"/baseline.db* "$work"/objectgraph.ogstore*
done

# --- Summary -------------------------------------------------------------------------------

python3 - "$work" <<'PYTHON'
import json, re, statistics, sys

work = sys.argv[1]
def lines(name):
    with open(f"{work}/{name}") as f:
        return [line for line in f.read().splitlines() if line.strip()]

sqlite = [json.loads(line) for line in lines("sqlite.jsonl")]
graph = [json.loads(line) for line in lines("objectgraph.jsonl")]
sqlite_screen = [json.loads(line) for line in lines("sqlite-screen.jsonl")]
graph_screen = [json.loads(line) for line in lines("objectgraph-screen.jsonl")]
floors = [tuple(map(float, re.findall(r"([0-9.]+) s", line))) for line in lines("limits.txt")]
sync_floor = statistics.median(f[0] for f in floors)
write_floor = statistics.median(f[1] for f in floors)
med = lambda runs, key: statistics.median(run[key] for run in runs)

# Every run of both must give the same results.
problems = []
results = ("n_equal", "n_contains", "n_range", "h_top", "h_page", "n_compound", "n_wide", "h_wide")
for key in results:
    values = {run[key] for run in sqlite + graph}
    if len(values) != 1:
        problems.append(f"{key} differs: " + ", ".join(sorted(map(str, values))))
values = {run["h_first"] for run in sqlite_screen + graph_screen}
if len(values) != 1:
    problems.append("h_first differs: " + ", ".join(sorted(values)))

# The brief's targets: a ratio to SQLite, or to the machine's floor of 1,000 fdatasyncs for
# the phases of 1,000 durable saves; None is reported without a target.
targets = {
    "build_save": None, "open": None,
    "q_equal": ("sqlite", 0.5), "q_contains": ("sqlite", 0.5), "q_range": ("sqlite", 0.5),
    "q_top": ("sqlite", 0.5), "q_page": ("sqlite", 0.5), "q_compound": ("sqlite", 0.5),
    "wide_build": ("sqlite", 0.5), "wide_move": ("floor", 1.1),
    "wide_insert": ("floor", 1.1), "wide_delete": ("floor", 1.1),
    "first_screen": None,
}
def runs_for(phase):
    return (sqlite_screen, graph_screen) if phase == "first_screen" else (sqlite, graph)

print()
print(f"appbench, roots {graph[0]['roots']} ({graph[0]['boxes']} boxes), medians of {len(graph)} "
      f"alternating runs; {sqlite[0]['impl']}")
print(f"{'phase':<16}{'sqlite s':>10}{'objectgraph s':>15}{'og/sqlite':>11}   target")
for phase, target in targets.items():
    s_runs, g_runs = runs_for(phase)
    s, g = med(s_runs, phase), med(g_runs, phase)
    ratio = g / s if s > 0 else float("inf")
    line = f"{phase:<16}{s:>10.4f}{g:>15.4f}{ratio:>10.2f}x"
    if target:
        base, factor = target
        if base == "floor":
            limit = factor * sync_floor
            text = f"<= {factor} x floor ({limit:.4f} s; {g / sync_floor:.2f} x floor)"
        else:
            limit, text = factor * s, f"<= {factor} x sqlite"
        line += f"   {text}: " + ("ok" if g <= limit else "MISS")
    print(line)
s_bytes, g_bytes = med(sqlite, "file_bytes"), med(graph, "file_bytes")
file_ratio = f"{g_bytes / s_bytes:.2f}x" if s_bytes else "n/a"
print(f"{'file bytes':<16}{s_bytes:>10.0f}{g_bytes:>15.0f}{file_ratio:>11}")
for label, (s_runs, g_runs) in (("peak RSS MiB", (sqlite, graph)),
                                ("  first screen", (sqlite_screen, graph_screen))):
    s_rss, g_rss = med(s_runs, "peak_rss_bytes"), med(g_runs, "peak_rss_bytes")
    print(f"{label:<16}{s_rss / 2**20:>10.1f}{g_rss / 2**20:>15.1f}{g_rss / s_rss:>10.2f}x")
print(f"floor (limits.c, median): 1000 x (64 B append + fdatasync) {sync_floor:.4f} s; "
      f"10 MiB write + fsync {write_floor:.4f} s")
summary = ", ".join(f"{key} {graph[0][key]}" for key in results)
print(f"results: {summary}, h_first {graph_screen[0]['h_first']}: "
      + ("both agree" if not problems else "MISMATCH"))
for problem in problems:
    print("MISMATCH: " + problem)
sys.exit(1 if problems else 0)
PYTHON
