"""``hermes sessions``: list, show, export, search, title, delete, prune, stats, repair, import."""

from __future__ import annotations

import functools
import re
import sys
import time
from pathlib import Path

import click

from plugins.asking import confirm
from plugins.numbers import cutoff


def _when(ts) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "-"


def _one_line(text, width: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _row(r: dict, label: str) -> str:
    """A session as a line of ``sessions list``."""
    return (f"{r['id']}  {_when(r['updated_at'])}  {r['platform'] or '-':<6} {r['model'] or '-':<16} "
            f"{r['message_count']:>5} msgs  {label}")


def _echo(text: str) -> None:
    """A line of stored text: on a terminal its escape sequences are shown, not obeyed."""
    from plugins.text import printable

    click.echo(printable(text, sys.stdout))


def _fail(message: str) -> click.ClickException:
    """One line on stderr, exit code 1, in the kernel CLI's style."""
    try:
        from hermes.cli.app import Fail
    except ImportError:  # pragma: no cover - a kernel without the CLI module
        return click.ClickException(message)
    return Fail(message)


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")


def usage_since(store, since: float, page: int = 500) -> dict:
    """What the sessions active since ``since`` used: sessions, model calls and tokens in all, by model (as
    ``provider:model``), by platform and sessions by local day. Read a page of sessions at a time, newest first."""
    from datetime import datetime

    total = {"sessions": 0, "api_calls": 0, **dict.fromkeys(TOKENS, 0)}
    by_model: dict = {}
    by_platform: dict = {}
    by_day: dict = {}
    offset = 0
    while True:
        rows = store.list_sessions(limit=page, offset=offset)
        recent = [r for r in rows if (r.get("updated_at") or 0) >= since]
        for row in recent:
            label = ":".join(p for p in (row.get("provider"), row.get("model")) if p) or "(unknown)"
            model = by_model.setdefault(label, {"sessions": 0, "api_calls": 0, **dict.fromkeys(TOKENS, 0)})
            for bucket in (total, model):
                bucket["sessions"] += 1
                bucket["api_calls"] += row.get("api_call_count") or 0
                for key in TOKENS:
                    bucket[key] += row.get(key) or 0
            platform = row.get("platform") or "(unknown)"
            by_platform[platform] = by_platform.get(platform, 0) + 1
            day = datetime.fromtimestamp(row["started_at"]).strftime("%Y-%m-%d")
            by_day[day] = by_day.get(day, 0) + 1
        if len(recent) < len(rows) or len(rows) < page:  # the rest were last active before ``since``
            break
        offset += page
    ordered = dict(sorted(by_model.items(), key=lambda item: (-item[1]["input_tokens"] - item[1]["output_tokens"],
                                                              item[0])))
    return {"since": datetime.fromtimestamp(since).isoformat(timespec="seconds"), **total, "by_model": ordered,
            "by_platform": dict(sorted(by_platform.items(), key=lambda item: (-item[1], item[0]))),
            "by_day": dict(sorted(by_day.items()))}


def stats_lines(used: dict) -> list:
    """``usage_since``'s answer as ``hermes sessions stats`` (and chat's ``/insights``) shows it."""
    if not used["sessions"]:
        return [f"No sessions active since {used['since'][:10]}."]
    n = "{:,}".format
    lines = [f"Since {used['since'][:16].replace('T', ' ')}: {n(used['sessions'])} sessions, "
             f"{n(used['api_calls'])} model calls",
             f"tokens: {n(used['input_tokens'])} in ({n(used['cache_read_tokens'])} of them cached), "
             f"{n(used['output_tokens'])} out ({n(used['reasoning_tokens'])} reasoning)", "by model:"]
    width = max(map(len, used["by_model"]))
    lines += [f"  {label:<{width}}  {n(row['sessions']):>5} sessions {n(row['api_calls']):>7} calls "
              f"{n(row['input_tokens']):>12} in {n(row['output_tokens']):>10} out"
              for label, row in used["by_model"].items()]
    busiest = max(used["by_day"].items(), key=lambda item: item[1])
    return lines + ["by platform: " + ", ".join(f"{p} {c}" for p, c in used["by_platform"].items()),
                    f"busiest day: {busiest[0]} ({busiest[1]} sessions started); {len(used['by_day'])} days with "
                    "some"]


def _fenced(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks in it (a result holding ``` stays inside)."""
    fence = "`" * max(3, 1 + max(map(len, re.findall("`+", text)), default=0))
    return f"{fence}{info}\n{text}\n{fence}"


def markdown(meta: dict, messages: list) -> str:
    """A stored session as Markdown: a title, what it ran on, then each message (``sessions export``)."""
    from kernel.messages import text_of

    first = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    lines = [f"# {_one_line(meta.get('title') or first or meta['id'], 80)}", "",
             f"session `{meta['id']}` · model {meta.get('model') or '-'} · started {_when(meta.get('started_at'))} · "
             f"{len(messages)} messages" + (f" · continues `{meta['parent_session_id']}`" if meta.get("parent_session_id")
                                            else "")]
    names = {}  # tool_call_id -> tool name, for the results
    for msg in messages:
        role, text = msg.get("role"), text_of(msg.get("content")).strip()
        if role == "tool":
            name = names.get(msg.get("tool_call_id"), "tool")
            lines += ["", f"<details><summary>{name} result</summary>", "", _fenced(text), "", "</details>"]
            continue
        lines += ["", f"### {'You' if role == 'user' else 'hermes' if role == 'assistant' else role}"]
        if isinstance(msg.get("reasoning"), str) and msg["reasoning"].strip():
            lines += ["", "<details><summary>reasoning</summary>", "", msg["reasoning"].strip(), "", "</details>"]
        lines += ["", text] if text else []
        lines += [line for image in _images(msg.get("content")) for line in ("", image)]
        for call in msg.get("tool_calls") or []:
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            names[call.get("id")] = fn.get("name", "?")
            lines += ["", f"**{fn.get('name', '?')}**", "", _fenced(str(fn.get("arguments", "")), "json")]
    return "\n".join(lines)


def _images(content) -> list:
    """A Markdown line for each image of a message's parts: a URL's shown, a ``data:`` URL's type and size said."""
    found = []
    for part in content if isinstance(content, list) else ():
        image = part.get("image_url") if isinstance(part, dict) and part.get("type") == "image_url" else None
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith("data:"):
            from plugins.images import data_url

            mime, data = data_url(url)
            size = len(data) * 3 // 4 - (len(data) - len(data.rstrip("=")))  # base64's bytes, not decoded
            found.append(f"*(an image: {mime}, {f'{size} bytes' if size < 1024 else f'{size / 1024:.1f} KB'})*")
        elif isinstance(url, str) and url:
            found.append(f"![an image]({url})")
    return found


def write_new(path, text: str) -> None:
    """``text`` (and a final newline) into a new file: never over one that is there (FileExistsError)."""
    with open(path, "x", encoding="utf-8") as out:
        out.write(text + "\n")


def _errors_as_clicks(fn):
    """Store errors and bad input become one line on stderr and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from plugins.sessions.base import StoreError

        try:
            return fn(*args, **kwargs)
        except (StoreError, ValueError) as exc:
            raise _fail(str(exc)) from None

    return wrapper


def _print_json(value) -> None:
    from hermes.cli.app import echo_json  # under --json the document alone reaches stdout

    echo_json(value)


def _format_message(i: int, msg: dict) -> str:
    role = msg.get("role", "?")
    head = f"[{i}] {role}"
    if msg.get("tool_call_id"):
        head += f" ({msg['tool_call_id']})"
    content = msg.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", f"<{p.get('type', 'part')}>") for p in content if isinstance(p, dict))
    lines = [f"{head}: {content}" if content else head + ":"]
    if msg.get("reasoning"):
        lines.append(f"    reasoning: {_one_line(msg['reasoning'], 200)}")
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        lines.append(f"    -> {fn.get('name', '?')}({_one_line(fn.get('arguments', ''), 200)})")
    return "\n".join(lines)


def sessions_group(config) -> click.Group:
    def store():
        from plugins.sessions import get_store

        return get_store(config, getattr(click.get_current_context().obj, "host", None))

    @click.group("sessions", invoke_without_command=True)
    @click.pass_context
    def group(ctx):
        """Stored conversations: list, show, export, search, stats, delete, prune, import (alone: list)."""
        if ctx.invoked_subcommand is None:
            ctx.invoke(list_cmd)

    @group.command("list")
    @click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
    @click.option("--platform", default=None, help="Only sessions of this platform (cli, ...).")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @_errors_as_clicks
    def list_cmd(limit, platform, as_json):
        """List sessions, most recently active first."""
        rows = store().list_sessions(limit=limit, platform=platform)
        if as_json:
            _print_json(rows)
            return
        if not rows:
            from plugins.sessions.hermes_agent import find

            agents = None if platform else find(config.data_dir)
            _echo("No sessions yet." + (f" hermes-agent's are in {agents}: `hermes sessions import` copies them here."
                                        if agents else ""))
            return
        for r in rows:
            label = _one_line(r["title"] or r["preview"] or "", 60)
            if r["continued_in"]:  # /undo, /retry and compression go on in a new session: say which is current
                label += f"  [continued in {r['continued_in']}]"
            elif r["parent_session_id"] and r["start_reason"] in ("compression", "undo"):
                label += f"  [current; after {r['start_reason']} of {r['parent_session_id']}]"
            _echo(_row(r, label))

    @group.command("browse")
    @click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
    @click.pass_context
    @_errors_as_clicks
    def browse_cmd(ctx, limit):
        """Choose a session at a terminal and go on in it: the latest by number, or words to find (hermes-agent's)."""
        import sys

        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise _fail("browse asks at a terminal; in a script: `hermes sessions list`, then `hermes chat -r ID`")
        s = store()
        rows, said = s.list_sessions(limit=limit, include_children=False), "the latest"
        while True:
            if not rows:
                _echo(f"No sessions hold {said}." if said != "the latest" else "No sessions yet.")
            for number, r in enumerate(rows, 1):
                _echo(f"{number:>3}. {_row(r, _one_line(r['title'] or r['preview'] or '', 50))}")
            answer = click.prompt("\nA number goes on in that session; words find others; Enter leaves", default="",
                                  show_default=False).strip()
            if not answer:
                return
            if answer.isdigit() and 1 <= int(answer) <= len(rows):
                break
            first: dict = {}  # session -> its best match's words
            for hit in s.search(answer, 200):
                first.setdefault(hit["session_id"], hit["snippet"])
            rows = [{**r, "preview": first[r["id"]]} for r in map(s.get_session, first) if r][:limit]
            said = f"'{answer}'"
        chat = ctx.find_root().command.get_command(ctx.find_root(), "chat")
        if chat is None:
            raise _fail("no chat command here (the terminal plugin is disabled): `hermes chat -r ID` needs it")
        ctx.invoke(chat, resume=rows[int(answer) - 1]["id"])

    @group.command("show")
    @click.argument("session_id")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @_errors_as_clicks
    def show_cmd(session_id, as_json):
        """Show one session and its messages (an id or a unique prefix)."""
        s = store()
        sid = s.resolve_id(session_id)
        meta, messages = s.get_session(sid), s.load(sid) or []
        if as_json:
            _print_json({"session": meta, "messages": messages})
            return
        _echo(f"session {sid}" + (f"  \"{meta['title']}\"" if meta["title"] else ""))
        _echo(
            f"  model {meta['model'] or '-'}  provider {meta['provider'] or '-'}  platform {meta['platform'] or '-'}"
        )
        _echo(f"  started {_when(meta['started_at'])}  last ended {_when(meta['ended_at'])}"
                   f" ({meta['end_reason'] or '-'})")
        if meta["parent_session_id"]:
            _echo(f"  parent {meta['parent_session_id']} ({meta['start_reason'] or '-'})")
        if meta["continued_in"]:
            _echo(f"  continued in {meta['continued_in']}: that session is the current one of this conversation")
        _echo(
            f"  tokens in {meta['input_tokens']} out {meta['output_tokens']} cache read "
            f"{meta['cache_read_tokens']} write {meta['cache_write_tokens']}  api calls {meta['api_call_count']}"
        )
        for i, msg in enumerate(messages):
            _echo(_format_message(i, msg))

    @group.command("search")
    @click.argument("query")
    @click.option("--limit", "-n", type=click.IntRange(1, 200), default=20, show_default=True)
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @_errors_as_clicks
    def search_cmd(query, limit, as_json):
        """Find messages containing all the words of QUERY."""
        hits = store().search(query, limit)
        if as_json:
            _print_json(hits)
            return
        if not hits:
            _echo("No matches.")
            return
        for h in hits:
            _echo(f"{h['session_id']}  [{h['seq']}] {h['role']:<9} {_one_line(h['snippet'], 100)}")

    @group.command("title")
    @click.argument("session_id")
    @click.argument("title", nargs=-1, required=True)
    @_errors_as_clicks
    def title_cmd(session_id, title):
        """Give a session a title (the words after its id; `rename` as hermes-agent's)."""
        s = store()
        sid = s.resolve_id(session_id)
        s.set_title(sid, " ".join(title))
        click.echo(f"Titled {sid}.")

    group.add_command(title_cmd, "rename")

    @group.command("delete")
    @click.argument("session_id")
    @click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
    @_errors_as_clicks
    def delete_cmd(session_id, yes):
        """Delete a session and its messages."""
        s = store()
        sid = s.resolve_id(session_id)
        busy = s.claim(sid)  # held until the delete is done (this process ends)
        if busy:  # a run still writes it: deleting now would lose what it writes next, or leave a fragment
            raise click.ClickException(busy.replace("resume it when", "delete it when"))
        if not yes:
            meta = s.get_session(sid)
            confirm(f"Delete session {sid} ({meta['message_count']} messages)?", f"session {sid} was not deleted")
        s.delete(sid)
        click.echo(f"Deleted {sid}.")

    @group.command("export")
    @click.argument("session_id")
    @click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE.md",
                  help="Write it to this new file (default: stdout).")
    @_errors_as_clicks
    def export_cmd(session_id, output):
        """A session as Markdown to read or share: each message, tool calls with their arguments and results."""
        s = store()
        sid = s.resolve_id(session_id)
        text = markdown(s.get_session(sid), s.load(sid) or [])
        if output is None:
            _echo(text)
            return
        try:
            write_new(output, text)
        except OSError as exc:
            raise _fail(f"{output}: {exc.strerror or exc}" + ("; choose another name" if isinstance(exc, FileExistsError)
                                                                 else "")) from None
        click.echo(f"Wrote {sid} to {output}.")

    @group.command("prune")
    @click.option("--older-than", "age", required=True, metavar="AGE",
                  help="Last active longer ago than this: 30d, 12h, 2w (a bare number: days), or a date (2026-11-01).")
    @click.option("--platform", default=None, help="Only sessions of this platform (cli, run, api, ...).")
    @click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
    @click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON: the ids deleted (or, --dry-run, to delete).")
    @_errors_as_clicks
    def prune_cmd(age, platform, dry_run, yes, as_json):
        """Delete the sessions last active before a time, each with its messages. A conversation goes whole or
        stays whole: a session continued or delegated from one still in use is kept with it."""
        before = cutoff(age)
        s = store()
        rows = s.prunable(before, platform)
        messages = sum(r["message_count"] or 0 for r in rows)
        what = f"{len(rows)} session{'s' * (len(rows) != 1)} ({messages} messages) last active before {_when(before)}"
        if dry_run or not rows:
            if as_json:
                _print_json({"before": before, "to_delete": [r["id"] for r in rows], "deleted": []})
                return
            for r in rows:
                _echo(_row(r, _one_line(r["title"] or r["preview"] or "", 60)))
            click.echo(f"Would delete {what}." if rows else f"No sessions last active before {_when(before)}.")
            return
        if not yes:
            confirm(f"Delete {what}?", "nothing was deleted")
        deleted, busy, sizes = s.delete_unclaimed([r["id"] for r in rows])
        if as_json:
            _print_json({"before": before, "deleted": deleted, "in_use": busy,
                         "bytes": dict(zip(("before", "after"), sizes)) if isinstance(sizes, tuple) else None})
            return
        click.echo(f"Deleted {len(deleted)} of {what}; {len(busy)} in use, kept." if busy else f"Deleted {what}.")
        if sizes:
            click.echo(sizes if isinstance(sizes, str) else f"{s.where}: {_mb(sizes[0])} -> {_mb(sizes[1])}")

    @group.command("stats")
    @click.option("--since", "age", default="30d", show_default=True, metavar="AGE",
                  help="Sessions active since then: 30d, 12h, 2w (a bare number: days), or a date (2026-11-01).")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @_errors_as_clicks
    def stats_cmd(age, as_json):
        """What the sessions active since AGE used: model calls and tokens, by model, platform and day."""
        used = usage_since(store(), cutoff(age, "--since"))
        if as_json:
            _print_json(used)
            return
        click.echo("\n".join(stats_lines(used)))

    @group.command("import")
    @click.argument("state_db", required=False, type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @_errors_as_clicks
    def import_cmd(state_db, as_json):
        """hermes-agent's sessions, from its STATE_DB (default: the data folder's when shared with it, else
        ~/.hermes/state.db): listed, searched and resumed here under their ids. Its file is only read. Again later:
        the new sessions, and what hermes-agent added to one imported before (unless it went on here)."""
        from plugins.sessions import hermes_agent
        from plugins.sessions.base import StoreError

        source = state_db or hermes_agent.find(config.data_dir)
        if source is None:
            raise StoreError(f"no state.db of hermes-agent in {config.data_dir} or {Path.home() / '.hermes'}; "
                             "give its path: hermes sessions import PATH/state.db")
        done = hermes_agent.import_into(store(), source)
        if as_json:
            _print_json(done)
            return
        said = [f"{done['went_on']} imported before went on in hermes-agent (its new messages added)"] * \
            bool(done["went_on"]) + [f"{done['already_here']} were here already"] * bool(done["already_here"])
        click.echo(f"Imported {done['imported']} sessions ({done['messages']} messages) from {source}"
                   + "".join(f"; {part}" for part in said) + ".")

    @group.command("compact")
    @_errors_as_clicks
    def compact_cmd():
        """Give deleted sessions' space back to the file system (`optimize` as hermes-agent's); prune does it
        too, after it deletes."""
        s = store()
        if not hasattr(s, "compact"):
            click.echo(f"{s.where}: the database server keeps its own space; nothing to do here.")
            return
        before, after = s.compact()
        click.echo(f"{s.where}: {_mb(before)} -> {_mb(after)}")

    group.add_command(compact_cmd, "optimize")

    @group.command("repair")
    @click.option("--yes", "-y", is_flag=True, help="Move a damaged file aside without asking.")
    def repair_cmd(yes):
        """Check the session database. A damaged state.db is moved aside (kept
        as state.db.corrupt-<time>), a fresh one started and every session
        still readable copied into it; a server's database is mended in place."""
        from plugins.sessions.salvage import move_aside, salvage
        from plugins.sessions.base import StoreError

        s = store()
        try:
            problems = s.check()
        except StoreError as exc:  # unreadable for another reason (permissions, ...)
            raise _fail(str(exc)) from None
        if not problems:
            click.echo(f"{s.where}: ok (integrity check passed); nothing to do.")
            return
        click.echo(f"{s.where}: damaged: {_one_line('; '.join(problems), 200)}")
        if not hasattr(s, "path"):  # a server's database: its store mends it in place
            click.echo(f"{s.where}: {s.repair()}.")
            return
        if not yes:
            confirm("Move it aside and start a fresh session database?", f"{s.where} was not moved aside")
        s.close()
        target = move_aside(s.path)
        click.echo(f"Moved the damaged database to {target} (kept as it was).")
        report = salvage(target, s)
        click.echo(f"Started a fresh {s.path.name}: {report.summary()}.")

    return group
