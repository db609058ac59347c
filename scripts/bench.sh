#!/usr/bin/env bash
# tern-bench: builds it in release mode, starts nginx on a free 127.0.0.1 port with
# bench/nginx.conf.template (installing nginx with apt-get if it is missing), runs the benchmark
# against it, and stops nginx. Arguments (e.g. --json, --rounds 7, --quick) go to tern-bench.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/find_nginx.sh

prefix=$(mktemp -d)
mkdir -p "$prefix/www" "$prefix/client_body"
printf '{}' >"$prefix/www/tiny.json"
python3 - "$prefix/www/1k.json" <<'PY'
import json, sys
items = [{"id": i, "name": "city-%03d" % i, "t": i % 40} for i in range(16)]
text = json.dumps({"code": 0, "items": items})
text = text[:-1] + ', "pad": "' + "x" * (1024 - len(text) - 11) + '"}'
assert len(text) == 1024, len(text)
open(sys.argv[1], "w").write(text)
PY
head -c 10485760 /dev/urandom >"$prefix/www/10mb.bin"
case " $* " in *" --download-file "*) head -c 104857600 /dev/urandom >"$prefix/www/100mb.bin" ;; esac
# nginx workers run as an unprivileged user when started as root: mktemp's 0700 would give 403s.
chmod -R a+rX "$prefix"
# WebDAV uploads (--stream-upload) are written by those workers too.
mkdir -p "$prefix/www/uploads"
chmod a+rwx "$prefix/www/uploads" "$prefix/client_body"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
sed -e "s|__PREFIX__|$prefix|g" -e "s|__PORT__|$port|g" bench/nginx.conf.template >"$prefix/nginx.conf"
"$nginx_bin" -p "$prefix" -c "$prefix/nginx.conf" &
nginx_pid=$!
cleanup() {
    kill "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    rm -rf "$prefix"
}
trap cleanup EXIT INT TERM

ready=no
for _ in $(seq 1 50); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)" "http://127.0.0.1:$port/10mb.bin" 2>/dev/null; then
        ready=yes
        break
    fi
    sleep 0.1
done
if [ "$ready" != yes ]; then
    echo "nginx did not serve the benchmark files; its log:" >&2
    cat "$prefix/error.log" >&2 || true
    exit 1
fi

# TERN_BENCH_BIN runs another build of tern-bench (scripts/bench-compare.sh: the build before a change).
bin=${TERN_BENCH_BIN:-.build/release/tern-bench}
if [ -z "${TERN_BENCH_BIN:-}" ]; then
    echo "== building tern-bench (release)" >&2
    swift build -c release --product tern-bench >&2
fi
echo "== nginx $("$nginx_bin" -v 2>&1 | sed 's/.*\///') on 127.0.0.1:$port; $(nproc) cores; $bin" >&2
export TERN_BENCH_SINK_LOG="$prefix/sink.log"
export TERN_BENCH_WWW="$prefix/www"
${TERN_BENCH_WRAPPER:-} "$bin" --base-url "http://127.0.0.1:$port" "$@"
