#!/usr/bin/env bash
# tern-bench's WebSocket rows: builds it in release mode, starts the `websockets` echo server
# (scripts/websocket_server.py) and the floor's echo servers (`tern-bench --echo-servers`: a plain
# TCP echo and a minimal WebSocket echo on one compiled poll loop) on free 127.0.0.1 ports, runs
# `tern-bench --websocket` against them, and stops them. Arguments (--rounds 7, --quick) go to
# tern-bench. TERN_BENCH_BIN=path measures another build of tern-bench as the client (the servers
# stay this tree's). Prints Markdown tables (rates, idle memory, then Tern's CPU per round trip
# against the floor's); progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/install.sh
test_python_env

echo "== building tern-bench (release)" >&2
swift build -c release --product tern-bench >&2
servers=.build/release/tern-bench

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
logs=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$logs"
}
trap cleanup EXIT INT TERM

websocket_port=$(free_port)
"$python" scripts/websocket_server.py --port "$websocket_port" >"$logs/websocket.log" 2>&1 &
pids+=($!)
tcp_port=$(free_port)
minimal_port=$(free_port)
"$servers" --echo-servers "$tcp_port" "$minimal_port" >"$logs/echo.log" 2>&1 &
pids+=($!)
for port in "$websocket_port" "$tcp_port" "$minimal_port"; do
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()" "$port" 2>/dev/null; then
            continue 2
        fi
        sleep 0.1
    done
    echo "an echo server on port $port did not start; logs:" >&2
    cat "$logs"/*.log >&2
    exit 1
done

bin=${TERN_BENCH_BIN:-$servers}
echo "== websockets $("$python" -c 'import websockets; print(websockets.__version__)') and a TCP echo on 127.0.0.1; $(nproc) cores; $bin" >&2
"$bin" --websocket "ws://127.0.0.1:$websocket_port/echo" --tcp-port "$tcp_port" \
    --minimal-websocket "ws://127.0.0.1:$minimal_port/echo" --python "$python" \
    --ws-client bench/websocket_client.py "$@"
