"""``hermes config``: the click group and its commands (no plugin machinery:
``hermes --help`` adds them without loading plugins)."""

from __future__ import annotations

import re
from typing import Any

import click

_SECRET_NAME = re.compile(r"(?:^|_)(?:API_KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _fail(message: str) -> click.ClickException:
    from hermes.cli.app import Fail

    return Fail(message)


def _program() -> str:
    from hermes.cli.app import program

    return program()


def _declared(app) -> dict:
    """name -> Key of every declared key (loading the plugins declares theirs)."""
    app.host  # noqa: B018 - building the host runs register_config
    return app.config.keys


def key_for(config, name: str):
    """The declared key ``name`` is, or the mapping or list key it lies below; None if nobody declares it."""
    if name in config.keys:
        return config.keys[name]
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        key = config.keys.get(".".join(parts[:i]))
        if key is not None:
            return key if key.type in (dict, list, list[str]) or isinstance(key.type, tuple) else None
    return None


def source_of(config, name: str) -> str:
    """Where the value of ``name`` comes from: override, file, distro or default."""
    if name in config.overrides:
        return "override"
    for where, node in (("file", config.data), ("distro", config.defaults)):
        for part in name.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return where
    return "default"


def _suggest(keys: dict, name: str) -> str:
    from kernel.hints import did_you_mean

    return did_you_mean(name, keys, n=1)


def parse_value(text: str, key) -> Any:
    """The value of ``hermes config set KEY TEXT``: by the key's type when it
    is declared (a list also as ``a,b``), else as hermes-agent reads it (booleans, numbers, YAML)."""
    import yaml

    kind = key.type if key is not None and key.name else None
    kind = list if kind == list[str] else kind  # each name a string: `a,b` or [a, b]
    lowered = text.strip().lower()
    if key is not None and lowered in [c for c in key.choices if isinstance(c, str)]:
        return lowered  # `off` stays the word, not YAML's false
    if kind is bool:
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError(f"expected true or false, got {text!r}")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
        return int(value) if value.is_integer() and "." not in text else value
    if kind is str:
        return text
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        value = text
    if kind is list and not isinstance(value, (list, dict)):  # `terminal,file` as -t reads it; "" is none
        return [name.strip() for name in text.split(",") if name.strip()]
    if kind in (list, dict) and not isinstance(value, kind):
        raise ValueError(f"expected {'a list like a,b or [a, b]' if kind is list else 'a YAML mapping like {a: 1}'}, "
                         f"got {text!r}")
    return text if value is None else value


def secret_named(name: Any) -> bool:
    """Whether a key's value is a credential: a variable ``*_API_KEY``, ``*_TOKEN``, ... (``hermes.host.config``'s
    rule too), or an ``Authorization`` / ``Cookie`` header (``X-Api-Key`` is caught as ``X_API_KEY``)."""
    from hermes.host.config import is_secret_name

    name = str(name)
    return bool(is_secret_name(name.replace("-", "_")) or _SECRET_NAME.search(name.replace("-", "_"))
                or name.lower() in ("authorization", "proxy-authorization", "cookie"))


def masked(value: Any) -> Any:
    """``value`` with the secret-named entries below it masked (an MCP server's ``env: {GITHUB_TOKEN: ghp_...}``,
    an ``Authorization`` header), so ``config show`` can be pasted into a bug report; ``${VAR}`` references stay."""
    if isinstance(value, list):
        return [masked(item) for item in value]
    if isinstance(value, str):  # a database URL's password: postgresql://bob:[masked]@host/db
        return re.sub(r"(://[^/:@\s]*:)([^@/\s]+)@", lambda m: m[0] if m[2].startswith("${") else m[1] + "[masked]@",
                      value)
    if not isinstance(value, dict):
        return value
    return {k: f"[masked: {len(v)} characters]" if secret_named(k) and isinstance(v, str) and v and "${" not in v
            else masked(v) for k, v in value.items()}


def _show_value(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, default=str)


@click.group("config", invoke_without_command=True)
@click.pass_context
def config_group(ctx):
    """Show, check and change config.yaml (every key a plugin declares)."""
    if ctx.invoked_subcommand is None:  # `hermes config` alone shows it, as in hermes-agent
        ctx.invoke(config_show)


@config_group.command("path")
def config_path():
    """Print where config.yaml is (it may not exist yet)."""
    from hermes.host.paths import config_dir

    click.echo(str(config_dir() / "config.yaml"))


@config_group.command("edit")
@click.pass_obj
def config_edit(app):
    """Open config.yaml in your editor ($VISUAL or $EDITOR; made if missing), then check it as `config check`."""
    from plugins.config_command.edit import path_of

    path = path_of(app.config)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# hermes config: `{_program()} config show` lists every key, its default and its help\n",
                        encoding="utf-8")
    from plugins.asking import edit_file

    edit_file(path)
    app.reload()  # read what was saved
    _, problems = config_problems(app)
    for line in problems:
        click.echo(line)
    if problems:
        raise SystemExit(1)
    click.echo(f"ok: {path}")


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def config_show(app, as_json):
    """Every declared key with its value, where the value comes from, and its help."""
    from hermes.host.config import kind

    keys = _declared(app)
    config = app.config
    rows = [{"key": k.name, "value": masked(config.get(k.name)), "default": k.default,
             "source": source_of(config, k.name), "type": kind(k), "owner": k.owner, "help": k.help,
             # a value of the wrong type is skipped by get(): the default applies until it is fixed
             "problem": (config.check([k]) or [None])[0]} for k in sorted(keys.values(), key=lambda k: k.name)]
    if as_json:
        from hermes.cli.app import echo_json

        echo_json({"path": config.where(), "keys": rows})
        return
    click.echo(f"# {config.where()}")
    for row in rows:
        mark = "" if row["source"] == "default" else f"  [{row['source']}]"
        if row["problem"]:
            mark = f"  [ignored: {row['problem']}]"
        click.echo(f"{row['key']} = {_show_value(row['value'])}{mark}")
        click.echo(f"    {row['help']} ({row['type']}; {row['owner']})")


@config_group.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def config_get(app, key, as_json):
    """Print the value of KEY (a dotted name such as agent.max_turns)."""
    keys = _declared(app)
    if key_for(app.config, key) is None and app.config.get(key) is None:  # unknown, unless the file sets it anyway
        raise _fail(f"unknown key '{key}'{_suggest(keys, key)}; `hermes config show` lists them")
    value = app.config.get(key)
    for problem in app.config.check([keys[key]]) if key in keys else []:  # the key itself, not a mapping over it
        click.echo(f"{_program()}: note: ignored, the default applies: {problem}", err=True)
    if as_json:
        from hermes.cli.app import echo_json

        echo_json({"key": key, "value": value, "source": source_of(app.config, key)})
    else:
        click.echo("" if value is None else _show_value(value))


def _env_file_read(app) -> bool:
    """Whether hermes-compat, which reads the .env beside config.yaml, is loaded (a distro may leave it out)."""
    record = app.host.record("hermes-compat")
    return record is not None and record.status == "enabled"


@config_group.command("set", context_settings={"ignore_unknown_options": True})  # VALUE may be -5
@click.argument("key")
@click.argument("value")
@click.option("--force", is_flag=True, help="Write a key no loaded plugin declares.")
@click.pass_obj
def config_set(app, key, value, force):
    """Set KEY to VALUE in config.yaml (hermes config set agent.max_turns 40)."""

    last = key.rsplit(".", 1)[-1]
    if secret_named(last) and re.fullmatch(r"[A-Z_][A-Z0-9_]*", key) and _env_file_read(app):
        from hermes.host.paths import config_dir
        from plugins.hermes_compat.dotenv import save

        try:  # as hermes-agent's config set saves a key: the .env beside config.yaml, read at start
            path = save(config_dir(), key, value)
        except (OSError, ValueError) as exc:
            raise _fail(f"{key} was not saved: {exc}") from None
        click.echo(f"saved {key} in {path} (not in config.yaml; readable by you alone; an exported {key} wins)")
        return
    if secret_named(last) and "${" not in value:  # an MCP server's env or header may refer to one: ${GITHUB_TOKEN}
        var = re.sub(r"\W", "_", last).upper()
        how = f"set it to '${{{var}}}'" if "." in key else "name it with api_key_env"  # a reference: MCP env, headers
        raise _fail(f"'{key}' looks like a secret: hermes never stores keys in config.yaml; export {var}=... in your "
                    f"shell and {how}")
    keys = _declared(app)
    declared = key_for(app.config, key)
    if declared is None and not force:
        raise _fail(f"unknown key '{key}'{_suggest(keys, key)}; no loaded plugin reads it "
                    f"(use --force to write it anyway)")
    if declared is not None and declared.name != key and declared.type in (list, list[str]):  # `fallback_providers.0`
        raise _fail(f"{declared.name} is a list: set it whole, as `{_program()} config set {declared.name} '[...]'` "
                    f"(`{_program()} config get {declared.name}` shows it)")
    try:
        parsed = parse_value(value, declared if declared is not None and declared.name == key else None)
    except ValueError as exc:
        raise _fail(f"{key}: {exc}") from None
    config = app.config
    before = config.check()
    config.set_value(key, parsed)
    left = config.check()
    added = [problem for problem in left if problem not in before]
    if added:  # the new value against its key's type; nothing is written when it fails (so the file is not named)
        raise _fail(added[0].removeprefix(f"{config.where()}: "))
    if not force and (why := _names_problem(app, key, parsed)):
        raise _fail(f"{key}: {why} (use --force to write it anyway)")
    from plugins.config_command.edit import MISSING, EditError, edit, path_of, set_key

    try:  # the file as it is now (another terminal may have changed it), comments kept
        replaced = edit(path := path_of(config), lambda document: set_key(document, key, parsed))
    except (OSError, EditError) as exc:
        raise _fail(str(exc)) from None
    click.echo(f"set {key} = {_show_value(parsed) or repr('')} in {path}")  # `set model = '' in`, not `=  in`
    if parsed == "":
        click.echo(f"{_program()}: note: an empty value stays set; `{_program()} config unset {key}` removes it",
                   err=True)
    if isinstance(replaced, dict) and replaced and not isinstance(parsed, dict):
        click.echo(f"{_program()}: note: this replaced the section {key} and the {len(replaced)} key(s) it held: "
                   f"{', '.join(map(str, replaced))}", err=True)
    elif replaced is not MISSING and replaced != parsed and isinstance(replaced, (list, dict)) and replaced:
        click.echo(f"{_program()}: note: it was {_show_value(replaced)}", err=True)
    if left:
        more = f" (and {len(left) - 1} more: `{_program()} config check`)" if len(left) > 1 else ""
        click.echo(f"{_program()}: note: still wrong: {left[0]}{more}", err=True)


@config_group.command("unset")
@click.argument("key")
@click.pass_obj
def config_unset(app, key):
    """Remove KEY from config.yaml (its default applies again)."""
    from plugins.config_command.edit import EditError, edit, path_of, unset_key

    try:
        removed = edit(path := path_of(app.config), lambda document: unset_key(document, key))
    except (OSError, EditError) as exc:
        raise _fail(str(exc)) from None
    if not removed:  # a typo unsets nothing: name the key the file does set
        from kernel.hints import did_you_mean

        click.echo(f"{key} is not set in {app.config.where()}{did_you_mean(key, _dotted(app.config.data), n=1)}",
                   err=True)
        return
    click.echo(f"removed {key} from {path}")


def _dotted(data: dict, prefix: str = "") -> list:
    """Every dotted key config.yaml sets, sections too (``agent``, ``agent.max_turns``)."""
    names = []
    for name, value in data.items():
        names.append(f"{prefix}{name}")
        names += _dotted(value, f"{prefix}{name}.") if isinstance(value, dict) else []
    return names


@config_group.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def config_check(app, as_json):
    """Check config.yaml: YAML, types, and keys no loaded plugin declares (exit 1 on a problem)."""
    path, problems = config_problems(app)
    if as_json:
        from hermes.cli.app import echo_json

        echo_json({"path": path, "ok": not problems, "problems": problems})
    else:
        for line in problems:
            click.echo(line)
        if not problems:
            click.echo(f"ok: {path}")
    if problems:
        raise SystemExit(1)


def config_problems(app) -> tuple:
    """``(path of config.yaml, problems)``: what ``config check`` says, one line each (``hermes doctor`` too)."""
    from hermes.cli.app import Fail
    from hermes.host.config import ConfigError

    problems, path = [], None
    try:
        config = app.config
        path = config.where()
        app.load_host(warn_unknown=False)  # declares the plugins' keys; unknown ones are reported below
        problems += config.check()
        for where, name, hint in config.unknown_keys():
            problems.append(f"{where}: unknown key '{name}'{hint}")
        problems += [f"{where}: {key}: {why}" for key in (*NAMES, *(k.name for k in config.keys.values() if k.names))
                     for where, value in _named_by(app, config, key, path) if (why := _names_problem(app, key, value))]
        from plugins.config_command.edit import duplicate_key

        problems += [f"{path}: {twice}"] if (twice := duplicate_key(path)) else []
    except (Fail, ConfigError) as exc:
        problems.append(exc.format_message() if isinstance(exc, Fail) else str(exc))
    return path, problems


NAMES = ("toolsets", "plugins.enabled", "plugins.disabled", "agent.disabled_tools")  # name toolsets, plugins, tools


def _named_by(app, config, key: str, path) -> list:
    """(where, value) of a key that names things: the file's and a distro's ``tools.blocked`` apart (runs join them)."""
    blocked = app.distro.blocked_tools if key == "agent.disabled_tools" and app.distro is not None else []
    if blocked:
        return [(path, [n for n in config.get(key) if n not in blocked]), ("distro settings", blocked)]
    return [(path if source_of(config, key) == "file" else "distro settings", config.get(key))]


def _names_problem(app, key: str, names) -> str:
    """Why a list of toolset names fails every run, one of plugin names leaves a plugin as it was (a typo in
    ``plugins.disabled``), or a key declared with ``names=TABLE`` names what no enabled plugin registers there (a
    typo in ``context.engine``), with the plugins installed now ("": none); a wrong type is the type check's to say."""
    from kernel.hints import did_you_mean

    declared = app.config.keys.get(key)
    table = getattr(declared, "names", "")
    if table and isinstance(names, str) and names.strip() and names != declared.default:  # a default is no typo
        known = sorted(app.host.registry.named.get(table, {}))
        return "" if names in known else (f"no enabled plugin registers '{names}' among the {table.replace('_', ' ')}"
                                          f", which are: {', '.join(known) or 'none'}{did_you_mean(names, known, n=1)}")
    if key not in NAMES or not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return ""
    if key == "agent.disabled_tools":  # a typo blocks nothing (a distro's tools.blocked lands here too)
        known = list(app.host.registry.tools)
        missing = [name for name in names if name not in known and not name.startswith("mcp__")]  # MCP's: at run time
        return f"no plugin registers a tool '{missing[0]}'{did_you_mean(missing[0], known, n=1)}" if missing else ""
    if key != "toolsets":
        known = [rec.name for rec in app.host.records]
        missing = [name for name in names if name not in known]
        return f"no plugin named '{missing[0]}'{did_you_mean(missing[0], known, n=1)}" if missing else ""
    try:
        app.host.registry.expand_toolsets(names)
    except KeyError as exc:
        return str(exc.args[0])
    return ""


def add_commands(cli) -> None:
    cli.add_command(config_group, repairs_config=True)  # it is how one fixes a wrong type in config.yaml
