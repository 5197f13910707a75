# Sourced by the other tools: makes sure .venv exists and holds the project as it is now.
#   VENV_EXTRAS=core   what running needs (tools/run)
#   VENV_EXTRAS=dev    that and the development tools: linters, mypy, pytest, agent frameworks
#                      (the default; tools/test)
# The stamp .venv/.thoughtledger-installed records what was installed, for which pyproject.toml;
# it is written only after pip succeeded, so a failed install is tried again on the next run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV_EXTRAS="${VENV_EXTRAS:-dev}"
STAMP=".venv/.thoughtledger-installed"

_venv_fail() {
    echo "tools/${0##*/}: error: $1" >&2
    exit 1
}

_venv_ensure() {
    local want hash stamp="" target note log
    case "$VENV_EXTRAS" in
        core) target="." ;;
        dev) target=".[dev]" ;;
        *) _venv_fail "VENV_EXTRAS must be core or dev, not '$VENV_EXTRAS'" ;;
    esac
    hash="$(sha256sum pyproject.toml | cut -d' ' -f1)"
    want="$VENV_EXTRAS $hash"
    [ -f "$STAMP" ] && stamp="$(cat "$STAMP")"
    # A dev install holds everything a core one does.
    if [ "$stamp" = "$want" ] || [ "$stamp" = "dev $hash" ]; then
        return 0
    fi
    if [ ! -x .venv/bin/python ]; then
        "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
            || _venv_fail "thoughtledger needs Python 3.11 or newer (set PYTHON=...)"
        "$PYTHON" -m venv .venv || { rm -rf .venv; _venv_fail "could not create .venv with $PYTHON"; }
    fi
    if [ -z "$stamp" ]; then
        note="installing thoughtledger into .venv (first run only)..."
    elif [ "${stamp#* }" = "$hash" ]; then
        note="adding the development tools to .venv (once)..."
    else
        note="updating .venv: pyproject.toml changed..."
    fi
    echo "$note" >&2
    rm -f "$STAMP"
    # pip's and the build backend's chatter stays in the log, shown only if the install fails.
    log="$(mktemp)"
    if ! {
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip \
            && .venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$target"
    } >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        _venv_fail "installing thoughtledger into .venv failed (pip's output is above); fix the cause and run again"
    fi
    rm -f "$log"
    echo "$want" >"$STAMP"
}

_venv_ensure
# The project runs from this checkout (an editable install), so its modules are compiled to
# bytecode where they lie. An environment that sets PYTHONDONTWRITEBYTECODE would have every
# command (and each of the test suite's thousands of processes) compile some 150 modules again:
# a fifth of a second or more each time. The bytecode stays in __pycache__ (ignored by git).
unset PYTHONDONTWRITEBYTECODE
