#!/usr/bin/env bash
# What the tests need from the system, installed when it is missing: bubblewrap,
# the sandbox the terminal tool runs in (tests/tools/test_sandbox.py). As root
# (or with sudo) through apt-get; elsewhere it says what to install and the
# sandbox tests skip. Called by the README's test command before pytest.
set -uo pipefail
if command -v bwrap >/dev/null 2>&1; then
  echo "test setup: bubblewrap (the tool sandbox) is installed" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test setup: bwrap is missing and there is no apt-get here: install bubblewrap to test the sandbox" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "test setup: bwrap is missing and apt-get needs root: install bubblewrap to test the sandbox" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q bubblewrap >/dev/null 2>&1 \
  || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q bubblewrap >/dev/null 2>&1; } \
  || echo "test setup: apt-get could not install bubblewrap: the sandbox tests skip" >&2
command -v bwrap >/dev/null 2>&1 && echo "test setup: installed bubblewrap (the tool sandbox)" >&2
exit 0
