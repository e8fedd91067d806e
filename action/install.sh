#!/usr/bin/env bash
# The action's first step: crashlens in a virtual environment of its own (or the one on PATH), its
# path written to the step's `bin` output.
set -euo pipefail
python="${CRASHLENS_PYTHON:-python3}"
mode="${CRASHLENS_INSTALL:-action}"
bin=""
case "$mode" in
  none)
    bin=$(command -v crashlens) || { echo "::error title=crashlens::install is none, but crashlens is not on PATH"; exit 2; }
    ;;
  action) spec="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}" ;;
  *) spec="$mode" ;;
esac
if [ -z "$bin" ]; then
  venv="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/crashlens-venv"
  "$python" -m venv "$venv"
  py="$venv/bin/python"
  [ -x "$py" ] || py="$venv/Scripts/python.exe"  # Windows runners
  "$py" -m pip install -q --disable-pip-version-check "$spec"
  bin="$(dirname "$py")/crashlens"
  [ -x "$bin" ] || bin="$bin.exe"
fi
"$bin" --version
echo "bin=$bin" >> "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
