#!/usr/bin/env bash
# The hermes-agent compatibility tests again, on the newest Python this machine
# has (published hermes-agent plugins follow hermes-agent's newer hosts, some
# need Python >= 3.12): a fresh venv, the project installed, tests/compat run;
# the durable engine's tests too (DBOS writes its SQLite timestamps one way
# before Python 3.12 and another from it); and hermes serve driven by the
# published hermes-agent API client (it needs Python >= 3.13: installed where
# this Python allows it).
# Called by the README's test command after the full suite on the default Python.
set -euo pipefail
cd "$(dirname "$0")/.."

current=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
newest=""
for version in 3.15 3.14 3.13 3.12; do
  [ "$version" = "$current" ] && break  # nothing newer than the suite's own interpreter
  for candidate in "$(command -v "python$version" 2>/dev/null || true)" \
                   "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version"*/bin/"python$version"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import venv, sqlite3, ssl' 2>/dev/null; then
      newest=$candidate
      break 2
    fi
  done
done
if [ -z "$newest" ]; then
  echo "compat on the newest Python: none newer than $current here; skipped"
  exit 0
fi

venv=$(mktemp -d)/venv
"$newest" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet --no-compile -e '.[test]'  # bytecode when first imported
tests=(tests/compat tests/durable)
if "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 13))'; then
  "$venv/bin/python" -m pip install --quiet 'hermes-agent-api-client>=0.3.3,<0.4' && tests+=(tests/serve/test_api_client.py)
fi
echo "compat on the newest Python: $("$venv/bin/python" --version)"
"$venv/bin/python" -m pytest -n 2 "${tests[@]}"  # addopts' -q: dots and the "N passed" line
