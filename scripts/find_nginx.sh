# Sourced by scripts/test.sh and scripts/bench.sh: sets nginx_bin to the nginx binary, installing
# Debian's nginx-light with apt-get when there is none.
nginx_bin=$(command -v nginx || true)
[ -z "$nginx_bin" ] && [ -x /usr/sbin/nginx ] && nginx_bin=/usr/sbin/nginx
if [ -z "$nginx_bin" ]; then
    echo "== installing nginx (apt-get)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q nginx-light >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q nginx-light >/dev/null; }
    nginx_bin=/usr/sbin/nginx
fi
