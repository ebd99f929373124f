"""Webhook answers as GitHub comments (hermes-agent's ``deliver: github_comment``): on the pull request or issue the
event names, through GitHub's REST API with ``GITHUB_TOKEN`` (or ``GH_TOKEN``, as the ``gh`` CLI reads it);
``GITHUB_API_URL`` names another API (GitHub Enterprise Server's, as GitHub Actions sets it).

A route names where with ``deliver_extra``'s templates, hermes-agent's keys: ``repo`` (default
``{repository.full_name}``) and ``pr_number`` (default: the event's ``number``, ``issue.number`` or
``pull_request.number``)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

REPO = re.compile(r"[A-Za-z0-9._-]+/[A-Za-z0-9._-]+")
MOST = 65536  # characters GitHub takes in one comment
DELIVER = "github_comment"


def token() -> str:
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or ""


def where(extra: Any, payload: dict, event: str, route: str) -> tuple:
    """``((repo, number), "")`` of the comment this event's answer goes to, or ``(None, why not)``."""
    from plugins.gateway.webhook import render

    extra = extra if isinstance(extra, dict) else {}
    repo = render(str(extra.get("repo") or "{repository.full_name}"), payload, event, route)
    number = render(str(extra["pr_number"]), payload, event, route) if extra.get("pr_number") else next(
        (str(n) for n in (payload.get("number"), (payload.get("issue") or {}).get("number"),
                          (payload.get("pull_request") or {}).get("number")) if n is not None), "")
    if not REPO.fullmatch(repo):
        return None, f"no repository to comment on (deliver_extra.repo is {repo!r}; owner/name)"
    if not number.isdigit() or int(number) < 1:
        return None, f"no pull request or issue to comment on (deliver_extra.pr_number is {number!r})"
    return (repo, int(number)), ""


def comment(repo: str, number: int, text: str) -> str:
    """Post ``text`` on ``repo``'s pull request or issue ``number``; why it failed, or ""."""
    import urllib.error
    import urllib.request

    if len(text) > MOST:
        text = text[:MOST - 80] + "\n\n[hermes: the answer was cut here, at the length GitHub takes in a comment]"
    api = (os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    request = urllib.request.Request(
        f"{api}/repos/{repo}/issues/{number}/comments", json.dumps({"body": text}).encode(), method="POST",
        headers={"Authorization": f"Bearer {token()}", "Accept": "application/vnd.github+json",
                 "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "hermes", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30):
            return ""
    except urllib.error.HTTPError as exc:
        try:
            said = json.loads(exc.read() or b"{}").get("message") or exc.reason
        except ValueError:
            said = exc.reason
        return f"GitHub answered {exc.code} for {repo}#{number}: {said}"
    except OSError as exc:
        return f"GitHub could not be reached ({api}): {getattr(exc, 'reason', None) or exc}"
