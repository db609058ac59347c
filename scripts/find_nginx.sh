# Sourced by scripts/test.sh and scripts/bench.sh: sets nginx_bin to the nginx binary, installing
# nginx (Debian's nginx-light, Homebrew's nginx) when there is none.
. "$(dirname "${BASH_SOURCE[0]}")/install.sh"
find_nginx() {
    nginx_bin=$(command -v nginx || true)
    if [ -z "$nginx_bin" ]; then
        for candidate in /usr/sbin/nginx /opt/homebrew/bin/nginx /usr/local/bin/nginx; do
            if [ -x "$candidate" ]; then nginx_bin=$candidate; break; fi
        done
    fi
}
find_nginx
if [ -z "$nginx_bin" ]; then
    install_package nginx-light nginx
    find_nginx
    [ -n "$nginx_bin" ] || { echo "error: nginx was installed but is not on PATH" >&2; exit 1; }
fi
