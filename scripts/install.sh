# Sourced by the scripts that need tools a fresh machine may lack (test.sh, bench.sh, soak.sh):
# installs them the way the machine expects, or says exactly what to install and stops.
#
#   install_package DEBIAN_NAME HOMEBREW_NAME   a system package: apt-get on Debian and Ubuntu
#                                               (through sudo when not root), Homebrew on macOS
#   test_python_env                             sets $python to a virtual environment under
#                                               .build/test-python with scripts/requirements-test.txt

install_package() {
    local debian=$1 homebrew=$2
    case "$(uname)" in
    Linux)
        if ! command -v apt-get >/dev/null; then
            echo "error: install the $debian package (or its equivalent for this system) and run again" >&2
            exit 1
        fi
        local run=()
        if [ "$(id -u)" != 0 ]; then
            if command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
                run=(sudo)
            else
                echo "error: $debian is missing and installing it needs root: run 'sudo apt-get install $debian' and run again" >&2
                exit 1
            fi
        fi
        echo "== installing $debian (apt-get)" >&2
        export DEBIAN_FRONTEND=noninteractive
        "${run[@]}" apt-get install -y -q "$debian" >/dev/null 2>&1 \
            || { "${run[@]}" apt-get update -q >/dev/null && "${run[@]}" apt-get install -y -q "$debian" >/dev/null; } \
            || { echo "error: apt-get could not install $debian" >&2; exit 1; }
        ;;
    Darwin)
        if ! command -v brew >/dev/null; then
            echo "error: install $homebrew (with Homebrew: 'brew install $homebrew') and run again" >&2
            exit 1
        fi
        echo "== installing $homebrew (brew)" >&2
        brew install --quiet "$homebrew" >/dev/null || { echo "error: brew could not install $homebrew" >&2; exit 1; }
        ;;
    *)
        echo "error: install $homebrew and run again" >&2
        exit 1
        ;;
    esac
}

test_python_env() {
    local venv=.build/test-python requirements=scripts/requirements-test.txt
    python=$venv/bin/python
    # Up to date when it was made from these very requirements.
    if [ -x "$python" ] && cmp -s "$requirements" "$venv/requirements.txt"; then return 0; fi
    command -v python3 >/dev/null || { echo "error: the tests need Python 3 (python3)" >&2; exit 1; }
    rm -rf "$venv"
    mkdir -p .build
    # Debian and Ubuntu ship venv (with its pip) in a package of its own.
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        rm -rf "$venv"
        install_package python3-venv python3
        python3 -m venv "$venv"
    fi
    echo "== installing the test servers' Python packages into $venv (pip)" >&2
    "$python" -m pip install --quiet --disable-pip-version-check -r "$requirements" \
        || { echo "error: pip could not install $requirements" >&2; rm -rf "$venv"; exit 1; }
    cp "$requirements" "$venv/requirements.txt"
}
