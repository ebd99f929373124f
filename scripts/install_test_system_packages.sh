#!/usr/bin/env bash
# What the tests need from the system, installed when it is missing: bubblewrap,
# the sandbox the terminal tool runs in (tests/tools/test_sandbox.py), and the
# distribution's Chromium with its driver, the headless browser that opens
# hermes serve's page (tests/serve/test_page.py), and PostgreSQL, the server the
# PostgreSQL session store's tests start in a temporary folder, and openssl, which makes the certificate
# of the web tool's https test (tests/tools/test_web_tools.py), and git, which holds the checkpoints
# (tests/tools/test_checkpoints.py). As root (or with sudo) through
# apt-get; elsewhere it says what to install and those tests skip. Called by the
# README's test command before pytest.
set -uo pipefail
# tirith, the command scanner the approval plugin asks when it is installed (tests/tools/test_tirith.py): its
# npm package from the registry, unpacked into a cache folder off PATH (on PATH it would scan every test's commands)
tirith_dir="${XDG_CACHE_HOME:-$HOME/.cache}/hermes-tests/tirith-0.4.2"
if [ ! -x "$tirith_dir/package/bin/tirith" ] && [ "$(uname -sm)" = "Linux x86_64" ]; then
  mkdir -p "$tirith_dir" && (cd "$tirith_dir" \
    && curl -fsSL -o tirith.tgz https://registry.npmjs.org/@sheeki03/tirith-linux-x64/-/tirith-linux-x64-0.4.2.tgz \
    && tar xzf tirith.tgz && rm tirith.tgz) >/dev/null 2>&1 \
    || echo "test setup: could not fetch tirith from the npm registry: its test skips" >&2
fi
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v git >/dev/null 2>&1 || missing+=(git)
if [ ${#missing[@]} -eq 0 ]; then
  echo "test setup: bubblewrap (the tool sandbox), Chromium (the page's browser), PostgreSQL, openssl and git are installed" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test setup: ${missing[*]} missing and there is no apt-get here: install them to run the tests that need them" >&2
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "test setup: ${missing[*]} missing and apt-get needs root: install them to run the tests that need them" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
  || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; } \
  || echo "test setup: apt-get could not install ${missing[*]}: the tests that need them skip" >&2
echo "test setup: installed what was missing of: ${missing[*]}" >&2
exit 0
