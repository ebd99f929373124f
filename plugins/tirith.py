"""tirith (https://github.com/sheeki03/tirith), a scanner of shell commands, asked about each terminal command when it
is installed (hermes-agent's ``security.tirith_*``): it knows what our rules do not (a punycode domain that looks like
another, plain http fed to a shell, terminal escape tricks). Its verdict (exit 0 allow, 1 block, 2 warn) turns into
findings the approval plugin asks about with its own, each under the rule key ``tirith:RULE`` (``command_allowlist``
and a session's yes work on those). hermes is not tied to it: it is not installed for the user, and where it is
missing nothing changes, unless ``security.tirith_fail_open: false`` makes every command ask."""

from __future__ import annotations

import json
from typing import Any

from hermes.host.config import Key

CONFIG_KEYS = [
    Key("security.tirith_enabled", bool, True, "scan each terminal command with tirith when it is installed"),
    Key("security.tirith_path", str, "tirith", "the tirith program: a name on PATH or a path"),
    Key("security.tirith_timeout", (int, float), 5, "seconds one scan may take", minimum=0.1),
    Key("security.tirith_fail_open", bool, True, "when tirith is missing, fails or times out, commands run as "
        "without it (false: each is asked about)"),
]
MOST_FINDINGS = 5


def findings(command: str, config: Any) -> list:
    """``[(rule key, description)]`` of what tirith says of ``command``; [] when it allows it (or is off)."""
    from plugins.bounded import find_program, run_within
    from plugins.tool_args import setting

    if not setting(config, "security.tirith_enabled", True, bool):  # no config (a check called alone): defaults
        return []
    fail_open = setting(config, "security.tirith_fail_open", True, bool)
    program = find_program(setting(config, "security.tirith_path", "", str) or "tirith")
    if program is None:
        return [] if fail_open else [("tirith:unavailable", "tirith, the command scanner, is not installed and "
                                      "security.tirith_fail_open is false")]
    timeout = setting(config, "security.tirith_timeout", 5, float)
    ran, = run_within([[program, "check", "--json", "--non-interactive", "--shell", "posix", "--", command]], timeout)
    if ran is None:
        return [] if fail_open else [("tirith:failed", f"tirith did not answer within {timeout:g} s and "
                                      "security.tirith_fail_open is false")]
    status, out, _ = ran
    if status == 0:
        return []
    if status not in (1, 2):  # a crash: its verdict is unknown
        return [] if fail_open else [("tirith:failed", f"tirith ended with status {status} and "
                                      "security.tirith_fail_open is false")]
    try:
        found = [f for f in json.loads(out or "{}").get("findings") or () if isinstance(f, dict)]
    except (ValueError, AttributeError):
        found = []
    if not found:  # the exit status is the verdict; its JSON only says why
        return [("tirith:unknown", "tirith flags this command (it did not say why)")]
    return [(f"tirith:{f.get('rule_id') or 'unknown'}",
             f"tirith: {f.get('title') or f.get('rule_id')} ({str(f.get('severity') or '?').lower()}): "
             f"{str(f.get('description') or '').splitlines()[0] if f.get('description') else ''}".rstrip(": "))
            for f in found[:MOST_FINDINGS]]


def doctor_line(config: Any):
    """``hermes doctor``'s line: where tirith is found (or, configured otherwise than by default, that it is not);
    None where nobody asked for it."""
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check

    if not config.get("security.tirith_enabled", True):
        return None
    from plugins.bounded import find_program

    configured = str(config.get("security.tirith_path", "") or "tirith")
    program = find_program(configured)
    if program is not None:
        return Check("tirith", OK, f"{program} scans each terminal command (its findings are asked about)")
    if not config.get("security.tirith_fail_open", True):
        return Check("tirith", FAIL, f"{configured} is not found and security.tirith_fail_open is false: every "
                                     "terminal command is asked about")
    return Check("tirith", WARN, f"{configured} is not found: commands are not scanned by it") \
        if configured != "tirith" else None
