# Sourced by the other tools: makes sure .venv exists and holds the project as it is now.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
        echo "thoughtledger needs Python 3.11 or newer (set PYTHON=...)" >&2; exit 2; }
    "$PYTHON" -m venv .venv
fi
# Reinstall only when the project definition changed since the last install.
STAMP=".venv/.thoughtledger-installed"
WANT="$(cat pyproject.toml | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]" 2>&1 \
        | grep -v -e "^WARNING: Location" >&2 || true
    echo "$WANT" > "$STAMP"
fi
