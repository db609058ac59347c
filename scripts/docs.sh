#!/usr/bin/env bash
# Builds the documentation archives of Tern, TernCache and TernStubs with the toolchain's own
# tools (swift-symbolgraph-extract, then docc convert; no package plugin), for static hosting,
# into .build/docs/<Module>.doccarchive and .build/docs/site/<module>/. Fails on any warning
# from the compiler's symbol graph or from DocC (a broken link, an unknown symbol, a missing
# topic), and on a backticked `Type.member` in the prose that names nothing (check_doc_names.py). Usage: scripts/docs.sh [--render]
#   --render  then serves the site on a free loopback port and opens Tern's landing page and one
#             article in headless Chromium (installed with apt-get when missing), checking that
#             each renders its title and its links.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --target TernStubs >&2  # builds Tern and TernCache too
bin=$(swift build --show-bin-path)
triple=$(swift -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["target"]["triple"])')
out=.build/docs
rm -rf "$out"
mkdir -p "$out/graphs" "$out/site"

status=0
for module in TernCache Tern TernStubs; do
    graphs="$out/graphs/$module"
    mkdir -p "$graphs"
    swift-symbolgraph-extract -module-name "$module" -target "$triple" -I "$bin/Modules" \
        -I "$bin/CTernCurl.build" -minimum-access-level public -skip-synthesized-members \
        -output-dir "$graphs" 2>"$out/$module-symbolgraph.log" || { cat "$out/$module-symbolgraph.log" >&2; exit 1; }
    # Only this module's graph: extensions of other modules' types come with it as their own files.
    lower=$(echo "$module" | tr '[:upper:]' '[:lower:]')
    docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "dev.tern.$module" \
        --output-path "$out/$module.doccarchive" --transform-for-static-hosting \
        --hosting-base-path "$lower" --warnings-as-errors >"$out/$module-docc.log" 2>&1 || {
        echo "== DocC found problems in $module:" >&2
        cat "$out/$module-docc.log" >&2
        status=1
        continue
    }
    cp -R "$out/$module.doccarchive" "$out/site/$lower"
    echo "== $module: $out/$module.doccarchive" >&2
done
# The prose's backticked `Type.member` names exist (code blocks are compiled by DocSamplesTests).
python3 scripts/check_doc_names.py "$out/graphs" Sources/*/*.docc/*.md README.md || status=1
[ $status -eq 0 ] || exit $status
[ "${1:-}" = "--render" ] || exit 0

if ! browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome); then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -qq chromium >&2 || { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >&2; }
    browser=$(command -v chromium)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$out/site" >"$out/http.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 1 50); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1).close()" "$port" 2>/dev/null && break
    sleep 0.1
done
render() {  # render PATH TITLE LINK: the page's DOM after its scripts ran has TITLE and a link to LINK
    local dom attempt
    for attempt in 1 2; do  # a second try for a browser that started slowly
        dom=$("$browser" --headless --no-sandbox --disable-gpu --virtual-time-budget=15000 --dump-dom \
            "http://127.0.0.1:$port/$1" 2>/dev/null) || true
        if grep -q "$2" <<<"$dom" && grep -q "href=\"[^\"]*$3" <<<"$dom"; then break; fi
    done
    if grep -q "$2" <<<"$dom" && grep -q "href=\"[^\"]*$3" <<<"$dom"; then
        echo "== rendered $1: \"$2\" and a link to $3" >&2
    else
        echo "== $1 did not render \"$2\" with a link to $3" >&2
        status=1
    fi
}
render tern/documentation/tern/ "Coming from AFNetworking and YBNetwork" "documentation/tern/client"
render tern/documentation/tern/gettingstarted "Getting Started" "documentation/tern/"
exit $status
