#!/usr/bin/env bash
# Runs the suite's plain passes (each transport, no sanitizer: `scripts/test.sh --plain`) N times
# and prints, per test, how many runs it failed in. With --load, a CPU-bound competitor of its own
# runs beside every run (one busy process per core; --load=K for K of them), started and stopped
# here. Each run's log is kept in .test-servers/flake-hunt/. Exits non-zero if any run failed.
#   bash scripts/flake-hunt.sh 10 --load
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-5}
load=0
for argument in "${@:2}"; do
    case "$argument" in
        --load) load=$(nproc) ;;
        --load=*) load=${argument#--load=} ;;
        *) echo "usage: flake-hunt.sh N [--load | --load=K]" >&2; exit 2 ;;
    esac
done

logs=.test-servers/flake-hunt
rm -rf "$logs"
mkdir -p "$logs"
hogs=()
stop_hogs() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
    hogs=()
}
trap stop_hogs EXIT INT TERM

# The suite's watchdog reports each time Swift's or Dispatch's shared threads ran no job for 2 s.
export TERN_STALL_WATCH=${TERN_STALL_WATCH:-2}
echo "== building once, so that every run times tests rather than the compiler"
swift build --build-tests >/dev/null
for run in $(seq 1 "$runs"); do
    for _ in $(seq 1 "$load"); do
        python3 -c 'while True: pass' &
        hogs+=($!)
    done
    started=$(date +%s)
    # A run that hangs is ended (and counted as failed) after 30 minutes.
    if timeout 1800 bash scripts/test.sh --plain >"$logs/run-$run.log" 2>&1; then verdict=passed; else verdict=FAILED; fi
    stop_hogs
    echo "run $run of $runs: $verdict in $(( $(date +%s) - started )) s (load: $load busy processes)"
done

python3 - "$logs" "$runs" <<'EOF'
import collections, pathlib, re, sys

folder, runs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
# "✘ Test name(args:) recorded an issue with 1 argument x → y at File.swift:12:3: ..."
issue = re.compile(r"✘ Test (\S+) recorded an issue(?: with \d+ arguments? (.*?))? at ([\w+.-]+\.swift):\d+")
failures, failed_runs, stalls = collections.defaultdict(set), 0, []
for number in range(1, runs + 1):
    text = (folder / f"run-{number}.log").read_text(errors="replace")
    passes = re.split(r"^== ", text, flags=re.M)
    explained = False   # whether the pass before a "FAILED:" line said why
    for section in passes:
        label = section.split("\n", 1)[0]
        if section.startswith("FAILED:"):
            if not explained:
                failures[f"pass failed without a test issue: {label[8:]}"].add(number)
            continue
        transport = "urlsession" if "URLSession transport" in label else "curl"
        explained = False
        for match in issue.finditer(section):
            name, arguments, where = match.groups()
            key = f"{where} {name}" + (f" [{arguments}]" if arguments else "")
            failures[f"{key} ({transport})"].add(number)
            explained = True
        crash = re.search(r"error: Exited with unexpected signal code (\d+)|Fatal error: .*", section)
        if crash:
            failures[f"test process crashed ({transport}): {crash.group(0)[:120]}"].add(number)
            explained = True
    if re.search(r"^== FAILED", text, flags=re.M) or "failed pass" in text:
        failed_runs += 1
    waits = [float(w) for pair in re.findall(r"a job waited ([\d.]+) s \(Swift\) / ([\d.]+) s", text) for w in pair]
    if waits:
        stalls.append(f"run {number}: {len(waits) // 2} stalls of the shared threads, the longest {max(waits):.1f} s")
print(f"\n{runs - failed_runs} of {runs} runs passed")
for line in stalls:
    print(line)
for key, numbers in sorted(failures.items(), key=lambda item: -len(item[1])):
    print(f"{len(numbers):3d} of {runs}  {key}  (runs {', '.join(map(str, sorted(numbers)))})")
sys.exit(1 if failed_runs else 0)
EOF
