#!/usr/bin/env bash
# compare.sh: seedbench on ObjectGraph against the raw-SQLite baseline, on this machine.
#
#   Benchmarks/compare.sh [--runs N] [--roots R] [--bench-dir DIR]
#
# Builds the SQLite baseline and limits.c from the shared bench folder (default: ../shared/bench
# beside the repository, or $SEEDBENCH_DIR) and seedbench in release, runs the two alternately
# N times (default 5) at R roots (default 100), checks that their checksums agree with each
# other, and prints per phase the median of each, the ratio ObjectGraph/SQLite and the brief's
# target, then file size, peak RSS and the machine's durable-write floor (limits.c).
set -euo pipefail

script=compare.sh
source "$(dirname "${BASH_SOURCE[0]}")/compare-common.sh"
parse_options "$@"
prepare sqlite_baseline.c seedbench
seedbench="$product_binary"

# --- Run -----------------------------------------------------------------------------------

echo "== $runs alternating runs at --roots $roots"
for ((run = 1; run <= runs; run++)); do
  printf '   run %d/%d: sqlite' "$run" "$runs"
  run_one sqlite "$work/sqlite.jsonl" \
    "$work/sqlite_baseline" --roots "$roots" --path "$work/baseline.db"
  printf ', objectgraph'
  run_one objectgraph "$work/objectgraph.jsonl" \
    "$seedbench" --roots "$roots" --path "$work/objectgraph.ogstore"
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
floors = [tuple(map(float, re.findall(r"([0-9.]+) s", line))) for line in lines("limits.txt")]
sync_floor = statistics.median(f[0] for f in floors)
write_floor = statistics.median(f[1] for f in floors)
med = lambda runs, key: statistics.median(run[key] for run in runs)

problems = []
for key in ("checksum_built", "checksum_final", "count_final"):
    values = {run[key] for run in sqlite + graph}
    if len(values) != 1:
        problems.append(f"{key} differs: " + ", ".join(sorted(map(str, values))))

# The brief's targets: a ratio to SQLite, or to the machine's floor for reorder; open and
# traverse have one target together.
targets = {
    "build_save": ("sqlite", 0.5), "open": None, "traverse": None,
    "open+traverse": ("sqlite", 1.0), "reorder": ("floor", 1.1), "update": ("sqlite", 0.5),
    "cascade_delete": ("sqlite", 0.5), "reopen": ("sqlite", 1.0),
}
for runs in (sqlite, graph):
    for run in runs:
        run["open+traverse"] = run["open"] + run["traverse"]
print()
print(f"seedbench, roots {graph[0]['roots']} ({graph[0]['boxes']} boxes), medians of {len(graph)} "
      f"alternating runs; {sqlite[0]['impl']}")
print(f"{'phase':<16}{'sqlite s':>10}{'objectgraph s':>15}{'og/sqlite':>11}   target")
for phase, target in targets.items():
    s, g = med(sqlite, phase), med(graph, phase)
    ratio = g / s if s > 0 else float("inf")
    line = f"{phase:<16}{s:>10.4f}{g:>15.4f}{ratio:>10.2f}x"
    if target:
        base, factor = target
        if base == "floor":
            limit, text = factor * sync_floor, f"<= {factor} x floor ({factor * sync_floor:.4f} s)"
        else:
            limit, text = factor * s, f"<= {factor} x sqlite"
        line += f"   {text}: " + ("ok" if g <= limit else "MISS")
    print(line)
phases = [p for p in targets if p != "open+traverse"]
s_total = sum(med(sqlite, p) for p in phases)
g_total = sum(med(graph, p) for p in phases)
print(f"{'total':<16}{s_total:>10.4f}{g_total:>15.4f}{g_total / s_total:>10.2f}x")
s_bytes, g_bytes = med(sqlite, "file_bytes"), med(graph, "file_bytes")
file_ratio = f"{g_bytes / s_bytes:.2f}x" if s_bytes else "n/a"
print(f"{'file bytes':<16}{s_bytes:>10.0f}{g_bytes:>15.0f}{file_ratio:>11}   <= 0.6 x sqlite: "
      + ("ok" if 0 < g_bytes <= 0.6 * s_bytes else "MISS"))
s_rss, g_rss = med(sqlite, "peak_rss_bytes"), med(graph, "peak_rss_bytes")
print(f"{'peak RSS MiB':<16}{s_rss / 2**20:>10.1f}{g_rss / 2**20:>15.1f}{g_rss / s_rss:>10.2f}x")
print(f"floor (limits.c, median): 1000 x (64 B append + fdatasync) {sync_floor:.4f} s; "
      f"10 MiB write + fsync {write_floor:.4f} s")
print(f"checksums: built {graph[0]['checksum_built']}, final {graph[0]['checksum_final']}, "
      f"count_final {graph[0]['count_final']}: " + ("both agree" if not problems else "MISMATCH"))
for problem in problems:
    print("MISMATCH: " + problem)
sys.exit(1 if problems else 0)
PYTHON
