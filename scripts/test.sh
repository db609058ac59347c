#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what is missing (Python packages into a virtual
# environment under .build, nginx with apt-get or Homebrew), starts httpbin (gunicorn) and
# Tern's fixture server on free 127.0.0.1 ports, runs `swift test` (then again under
# ThreadSanitizer), and stops the servers whatever happens. Extra arguments go to `swift test`,
# run on each transport (libcurl, then URLSession, on Linux; TERN_TRANSPORT picks one);
# `--plain` first runs only the passes without sanitizer on each transport (what
# scripts/flake-hunt.sh repeats), skipping ThreadSanitizer and the benchmark smoke runs.
set -euo pipefail
cd "$(dirname "$0")/.."

plain_only=false
if [ "${1:-}" = --plain ]; then plain_only=true; shift; fi
if [ "$plain_only" = true ] && [ $# -gt 0 ]; then
    # With arguments the script runs the tests named, heavy suites included, in one parallel pass.
    echo "test.sh: --plain takes no other arguments (got: $*)" >&2
    exit 2
fi

# The test servers' Python packages live in a virtual environment of their own (.build/test-python):
# stock Debian and Ubuntu refuse pip installs into the system Python.
. scripts/install.sh
test_python_env

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

logs=.test-servers
mkdir -p "$logs"
pids=()
h2_prefix=
stop_servers() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$h2_prefix" ]; then rm -rf "$h2_prefix"; fi
}
trap stop_servers EXIT INT TERM

httpbin_port=$(free_port)
# Idle connections stay open for 120 s (gunicorn closes them after 2 s by default). On a loaded
# machine a client's pooled connection can sit idle past 2 s between two requests, and a POST
# that FoundationNetworking then writes into the closing connection fails with "Broken pipe"
# (it cannot rewind the body to send it again): a race of the test machine's timing, which
# these reference tests are not about. docs/internals/linux-urlsession.md describes it.
"$python" -m gunicorn --bind "127.0.0.1:$httpbin_port" --workers 2 --worker-class gthread --threads 16 \
    --keep-alive 120 --log-level warning httpbin:app >"$logs/httpbin.log" 2>&1 &
pids+=($!)
fixture_port=$(free_port)
"$python" scripts/fixture_server.py --port "$fixture_port" >"$logs/fixture.log" 2>&1 &
pids+=($!)
# A forward proxy on loopback, for the proxy tests.
proxy_port=$(free_port)
"$python" scripts/fixture_proxy.py --port "$proxy_port" >"$logs/proxy.log" 2>&1 &
pids+=($!)
# A SOCKS5 proxy on loopback that resolves *.tern.test itself, for the SOCKS tests.
socks_port=$(free_port)
"$python" scripts/fixture_socks.py --port "$socks_port" >"$logs/socks.log" 2>&1 &
pids+=($!)
# The same fixture over TLS (a throw-away trustme authority in $logs/tls), for pinning and TLS options.
tls_port=$(free_port)
tls12_port=$(free_port)
"$python" scripts/fixture_tls.py --port "$tls_port" --tls12-port "$tls12_port" --dir "$logs/tls" >"$logs/fixture-tls.log" 2>&1 &
pids+=($!)

wait_for() {
    for _ in $(seq 1 100); do
        if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "$1" 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    echo "server at $1 did not start; log:" >&2
    cat "$logs"/*.log >&2
    return 1
}
# The reference WebSocket server (the websockets package), for the WebSocket tests.
websocket_port=$(free_port)
websocket_no_takeover_port=$(free_port)
"$python" scripts/websocket_server.py --port "$websocket_port" --second-port "$websocket_no_takeover_port" >"$logs/websocket.log" 2>&1 &
pids+=($!)
# And a hostile one: malformed frames, broken handshakes, stalls.
websocket_fixture_port=$(free_port)
websocket_stall_port=$(free_port)
"$python" scripts/fixture_websocket.py --port "$websocket_fixture_port" --second-port "$websocket_stall_port" >"$logs/fixture-websocket.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$httpbin_port/get"
wait_for "http://127.0.0.1:$fixture_port/json"
wait_for "http://127.0.0.1:$socks_port/socks-stats"
for _ in $(seq 1 100); do [ -f "$logs/tls/pins.txt" ] && break; sleep 0.2; done
python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5).close()" "$tls_port" \
    || { echo "the TLS fixture did not start; log:" >&2; cat "$logs/fixture-tls.log" >&2; exit 1; }

export TERN_HTTPBIN_URL="http://127.0.0.1:$httpbin_port"
export TERN_FIXTURE_URL="http://127.0.0.1:$fixture_port"
# nginx over TLS with HTTP/2 (the trustme certificate above), for the multiplexing test.
. scripts/find_nginx.sh
# Its own temporary directory: nginx's workers run as an unprivileged user when started as root,
# and a checkout under a private directory (mktemp's 0700, say) would give them 403s.
h2_prefix=$(mktemp -d)
mkdir -p "$h2_prefix/www/uploads" "$h2_prefix/client_body"
printf '{"h2": true}' >"$h2_prefix/www/tiny.json"
chmod -R a+rX "$h2_prefix" "$logs/tls"
chmod a+rwx "$h2_prefix/www/uploads" "$h2_prefix/client_body"
h2_port=$(free_port)
sed -e "s|__PREFIX__|$h2_prefix|g" -e "s|__PORT__|$h2_port|g" -e "s|__TLS__|$PWD/$logs/tls|g" \
    scripts/nginx-h2.conf.template >"$h2_prefix/nginx.conf"
"$nginx_bin" -p "$h2_prefix" -c "$h2_prefix/nginx.conf" 2>"$logs/nginx-h2.log" &
pids+=($!)
for _ in $(seq 1 50); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()" "$h2_port" 2>/dev/null && break
    sleep 0.1
done

python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5).close()" "$websocket_port" \
    || { echo "the WebSocket server did not start; log:" >&2; cat "$logs/websocket.log" >&2; exit 1; }
python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5).close()" "$websocket_fixture_port" \
    || { echo "the WebSocket fixture did not start; log:" >&2; cat "$logs/fixture-websocket.log" >&2; exit 1; }
export TERN_WEBSOCKET_URL="ws://127.0.0.1:$websocket_port"
export TERN_WEBSOCKET_NO_TAKEOVER_URL="ws://127.0.0.1:$websocket_no_takeover_port"
export TERN_WEBSOCKET_FIXTURE_URL="ws://127.0.0.1:$websocket_fixture_port"
export TERN_WEBSOCKET_STALL_URL="ws://127.0.0.1:$websocket_stall_port"
export TERN_PROXY_PORT="$proxy_port"
export TERN_SOCKS_PORT="$socks_port"
export TERN_H2_URL="https://127.0.0.1:$h2_port"
export TERN_TLS_URL="https://127.0.0.1:$tls_port"
export TERN_TLS12_URL="https://127.0.0.1:$tls12_port"
export TERN_TLS_DIR="$PWD/$logs/tls"
echo "== httpbin at $TERN_HTTPBIN_URL, fixture server at $TERN_FIXTURE_URL"

# The tests run at a lower priority than the servers they talk to: on two busy cores a server
# that waits for the CPU answers seconds late, and a timing test reads that as Tern's fault.
test_niceness=10
echo "== swift build (library, weather, tests)"
swift build --build-tests
if [ $# -gt 0 ]; then
    # The tests named (e.g. --filter X) on each transport: Linux's default, libcurl, then
    # URLSession (TERN_TRANSPORT=urlsession); `TERN_TRANSPORT=curl` or `=urlsession` runs one.
    status=0
    if [ -n "${TERN_TRANSPORT:-}" ] || [ "$(uname)" != Linux ]; then
        echo "== swift test $*"
        nice -n "$test_niceness" swift test "$@" || status=1
    else
        echo "== swift test $* (libcurl)"
        nice -n "$test_niceness" swift test "$@" || status=1
        echo "== swift test $* (URLSession)"
        TERN_TRANSPORT=urlsession nice -n "$test_niceness" swift test "$@" || status=1
    fi
    exit $status
fi

# One pass of `swift test`: a failed pass is reported and the next passes still run, so that one
# run shows every failure; the script fails at the end if any pass did.
# Each pass's output is kept in $logs/pass-N.log, and the failures of a failed pass are printed
# again at the very end, where a CI log cut to its tail still shows them.
failed_passes=()
failed_logs=()
pass_count=0
pass() {
    local label=$1; shift
    pass_count=$((pass_count + 1))
    local log="$logs/pass-$pass_count.log"
    echo "== $label"
    if ! nice -n "$test_niceness" "$@" 2>&1 | tee "$log"; then
        failed_passes+=("$label"); failed_logs+=("$log"); echo "== FAILED: $label"
    fi
}
finish_passes() {
    if [ ${#failed_passes[@]} -gt 0 ]; then
        local i
        for i in "${!failed_passes[@]}"; do
            echo "== what failed in: ${failed_passes[$i]} (whole output: ${failed_logs[$i]})" >&2
            grep -E '✘|error: |Fatal error|Program crashed|crashed:|exited with' "${failed_logs[$i]}" \
                | grep -v '^◇' | head -n 80 >&2 || true
        done
        printf '== failed pass: %s\n' "${failed_passes[@]}" >&2
        exit 1
    fi
}

# The parallel pass stays light: suites that move hundreds of megabytes, saturate the fixture
# server or both cores, or run stress loops and child processes by the dozen run in a pass of
# their own, one at a time, so that the timing of ordinary tests never depends on them. The
# lifecycle stress (2 × 10,000 requests with redirects, retries and random cancels) runs alone.
# TimeoutTests and MetricsTests run there too: their bodies must arrive at the server's pace, which
# a fixture server (or FoundationNetworking's own queue) starved by the parallel pass cannot keep;
# and CaptureReleaseTests, which times how soon a
# completion's captures go. CurlDescriptorLimitTests holds 1,100 descriptors, which
# would crowd every other test's. StreamingTests checks how much a paused exchange buffers
# within a second, which a loop starved by the parallel pass cannot keep either; and
# WebSocketConnectTests counts the process's threads while sixty sockets connect, and
# WebSocketEndingTests times stalled openings against their timeout and deadline (± 0.5 s), and
# WebSocketDeflateTests reads the process's memory around a deflate bomb.
heavy_suites='LargeDownloadTests|LargeUploadTests|LimitTests|SizeLimitMemoryTests|FaultInjectionTests|StressTests|CrashSafetyTests|OutboxCrashTests|TimeoutTests|MetricsTests|StreamingTests|CurlDescriptorLimitTests|CaptureReleaseTests|WebSocketConnectTests|WebSocketEndingTests|WebSocketDeflateTests'
heavy="\.($heavy_suites)/"
stress='\.LifecycleStressTests/'
all_heavy="\.($heavy_suites|LifecycleStressTests)/"
passes_on() {  # passes_on LABEL [ENV=VALUE ...]: the three passes, on one transport
    local label=$1; shift
    pass "the parallel pass$label" env "$@" swift test --skip-build --skip "$all_heavy"
    pass "the heavy suites, one at a time$label" env "$@" swift test --skip-build --no-parallel --filter "$heavy"
    pass "the lifecycle stress on its own$label" env "$@" swift test --skip-build --filter "$stress"
}
passes_on ""
if [ "$(uname)" = Linux ]; then
    # The runs above use Linux's default transport, libcurl; here every client the suite builds
    # without a transport of its own gets URLSession instead.
    passes_on " on the URLSession transport" TERN_TRANSPORT=urlsession
fi
if [ "$plain_only" = true ]; then finish_passes; exit 0; fi

# ThreadSanitizer: the whole suite again (stress and cancellation races included), built once.
# The WebSocket suites run in a parallel pass of their own there: under the sanitizer, sockets,
# their servers and the rest of the suite at once starve URLSession's timers.
sockets='\.(WebSocket[A-Za-z]*Tests|StubWebSocketTests)/'
swift build --build-tests --sanitize=thread
pass "the parallel pass under ThreadSanitizer" swift test --skip-build --sanitize=thread --skip "$all_heavy" --skip "$sockets"
pass "the WebSocket suites under ThreadSanitizer" swift test --skip-build --sanitize=thread --filter "$sockets" --skip "$all_heavy"
pass "the heavy suites under ThreadSanitizer" swift test --skip-build --sanitize=thread --no-parallel --filter "$heavy"
pass "the lifecycle stress under ThreadSanitizer" swift test --skip-build --sanitize=thread --filter "$stress"
if [ "$(uname)" = Linux ]; then
    pass "the lifecycle stress on the URLSession transport under ThreadSanitizer" \
        env TERN_TRANSPORT=urlsession swift test --skip-build --sanitize=thread --filter "$stress"
fi
finish_passes

echo "== tern-bench smoke run (nginx, release build, a tenth of the work): every response verified"
bash scripts/bench.sh --quick --json >"$logs/bench.jsonl"
python3 scripts/check_bench_output.py "$logs/bench.jsonl"

echo "== tern-bench --cache-hits smoke run (nginx): memory and disk hits (by the app's and the server's freshness, and a Vary variant), network round trip"
bash scripts/bench.sh --cache-hits --quick >"$logs/cache-hits.md"
for row in "memory-cache hit" "disk-cache hit" "network round trip"; do
    grep -q "| $row.* | cache\|| $row.* | network" "$logs/cache-hits.md" \
        || { echo "cache-hit benchmark output lacks \"$row\"" >&2; cat "$logs/cache-hits.md" >&2; exit 1; }
done
# A response with Vary is answered from its variant, and one fresh by its Cache-Control from
# either level, not the network.
for row in "memory-cache hit, one of three .Vary. variants" "memory-cache hit, .max-age. response, the server's freshness" \
    "disk-cache hit, .max-age. response, the server's freshness"; do
    grep -q "| $row .* | cache |" "$logs/cache-hits.md" \
        || { echo "cache-hit benchmark: \"$row\" was not a cache hit" >&2; cat "$logs/cache-hits.md" >&2; exit 1; }
done

echo "== tern-bench --download-file smoke run (nginx): 100 MB to a file, Tern against URLSession's download task"
bash scripts/bench.sh --download-file --quick --rounds 1 >"$logs/download-file.md"
grep -q "download-file-100mb mb_per_s" "$logs/download-file.md" && grep -q "download-file-100mb peak_rss_mb" "$logs/download-file.md" \
    || { echo "download-file benchmark output lacks its rows" >&2; cat "$logs/download-file.md" >&2; exit 1; }

echo "== tern-bench --outbox smoke run (nginx, a tenth of the work, one round): replayed writes each reach the server once"
bash scripts/bench.sh --outbox --quick --rounds 1 >"$logs/outbox-bench.md"
for row in "enqueue | outbox, flushed (FULL)" "enqueue | DiskCache write, 1 KB" "server count | outbox replay at launch | 1000.0" \
           "server count | direct sends | 1000.0"; do
    grep -q "| $row" "$logs/outbox-bench.md" || { echo "outbox benchmark output lacks \"$row\"" >&2; cat "$logs/outbox-bench.md" >&2; exit 1; }
done

echo "== tern-bench --stream-upload smoke run (nginx, 128 MiB, one round): a produced body stored whole by nginx"
bash scripts/bench.sh --stream-upload --quick --rounds 1 >"$logs/stream-upload.md"
grep -q "^stream-upload-128mb mb_per_s" "$logs/stream-upload.md" \
    || { echo "stream-upload benchmark output lacks its rows" >&2; cat "$logs/stream-upload.md" >&2; exit 1; }

echo "== tern-soak smoke run: redirects, faults, random cancels and deadlines; each request ends exactly once"
bash scripts/soak.sh --count 3000 | tee "$logs/soak.txt"
grep -q "missing: 0, doubled: 0, still registered: 0" "$logs/soak.txt" || { echo "soak run failed" >&2; exit 1; }

echo "== tern-bench --cache smoke run (a tenth of the work, one round): every contender reports"
swift build -c release --product tern-bench >/dev/null
"$(swift build -c release --show-bin-path)/tern-bench" --cache --quick --rounds 1 >"$logs/cache-bench.md"
for row in "memory get | MemoryCache" "memory set | NSCache" "disk set 100 B | raw SQLite" \
           "disk get 100 KB | file per value" "threshold get 128 KB | file"; do
    grep -q "| $row |" "$logs/cache-bench.md" || { echo "cache benchmark output lacks \"$row\"" >&2; cat "$logs/cache-bench.md" >&2; exit 1; }
done
echo "== tern-bench --parsers smoke run (one round): Tern's JSON parser, JSONSerialization, JSONDecoder"
"$(swift build -c release --show-bin-path)/tern-bench" --parsers --rounds 1 >"$logs/parsers.md"
grep -q "^parser throughput .* MB/s" "$logs/parsers.md" || { echo "parser benchmark output lacks its throughput" >&2; cat "$logs/parsers.md" >&2; exit 1; }
