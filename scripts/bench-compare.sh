#!/usr/bin/env bash
# Measures a change to the request path: builds tern-bench at REV (a git revision, e.g. the
# commit before the change) beside the working tree's, then runs the two release builds
# alternately — network benchmark (new, old, new, old, …) and --micro (pinned to one core) — and
# prints each build's medians side by side. Usage: scripts/bench-compare.sh REV [runs, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench-compare.sh REV [runs]}
runs=${2:-3}
out=.build/bench-compare
mkdir -p "$out"

old_tree="$out/tree-$(git rev-parse --short "$rev")"
if [ ! -d "$old_tree" ]; then git worktree add -q --detach "$old_tree" "$rev"; fi
echo "== building tern-bench at $rev and at the working tree (release)" >&2
(cd "$old_tree" && swift build -c release --product tern-bench >&2)
swift build -c release --product tern-bench >&2
new_bin="$PWD/.build/release/tern-bench"
old_bin="$(cd "$old_tree" && swift build -c release --show-bin-path)/tern-bench"

rm -f "$out"/*.jsonl "$out"/*.micro
for run in $(seq 1 "$runs"); do
    for build in new old; do
        bin=$new_bin; [ $build = old ] && bin=$old_bin
        echo "== run $run: $build build" >&2
        TERN_BENCH_BIN=$bin bash scripts/bench.sh --json --rounds 3 >>"$out/$build.jsonl"
        # Pinned to one core: unpinned, thread wake-ups across the two cores swing it by ±20%.
        if command -v taskset >/dev/null; then taskset -c 1 "$bin" --micro; else "$bin" --micro; fi >>"$out/$build.micro"
    done
done

python3 - "$out" "$rev" <<'PY'
import json, re, statistics, sys
out, rev = sys.argv[1], sys.argv[2]
def network(build):
    rows = {}
    for line in open(f"{out}/{build}.jsonl"):
        entry = json.loads(line)
        rows.setdefault((entry["workload"], entry["metric"]), []).append(entry["ratio"])
    return {key: statistics.median(values) for key, values in rows.items()}
def micro(build):
    rows = {}
    for line in open(f"{out}/{build}.micro"):
        match = re.match(r"(.+?)\s+([\d.]+) µs CPU per op", line)
        if match: rows.setdefault(match.group(1).strip(), []).append(float(match.group(2)))
    return {key: statistics.median(values) for key, values in rows.items()}
new, old = network("new"), network("old")
print(f"| workload | metric | ratio to URLSession, this build | ratio, {rev} |")
print("|---|---|---|---|")
for key in new:
    print(f"| {key[0]} | {key[1]} | {new[key]:.3f} | {old.get(key, float('nan')):.3f} |")
new, old = micro("new"), micro("old")
print(f"\n| micro (CPU µs per op, median) | this build | {rev} |")
print("|---|---|---|")
for key in new:
    print(f"| {key} | {new[key]:.2f} | {old.get(key, float('nan')):.2f} |")
PY
