#!/usr/bin/env bash
# tern-soak: builds it in release mode, starts the fixture server on a free 127.0.0.1 port, runs
# the soak through Tern (and, with --compare, the same mix through raw URLSession in a second
# process), and stops the server. Other arguments (--count N, --in-flight N, --seed N) go to
# tern-soak. Exits non-zero if a request ended other than exactly once, or the process died.
set -euo pipefail
cd "$(dirname "$0")/.."

compare=false
args=()
for argument in "$@"; do
    if [ "$argument" = --compare ]; then compare=true; else args+=("$argument"); fi
done

# glibc's default of one malloc arena per thread makes RSS mostly a measure of arenas.
export MALLOC_ARENA_MAX=2
swift build -c release --product tern-soak >/dev/null
bin="$(swift build -c release --show-bin-path)/tern-soak"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 scripts/fixture_server.py --port "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 100); do
    python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "http://127.0.0.1:$port/json" 2>/dev/null && break
    sleep 0.1
done

"$bin" --base-url "http://127.0.0.1:$port" "${args[@]}"
if $compare; then
    "$bin" --base-url "http://127.0.0.1:$port" --raw "${args[@]}"
fi
