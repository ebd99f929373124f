"""Built-in plugin secret-sources: API keys read from 1Password or Bitwarden as hermes starts, not kept in .env.

hermes-agent's ``secrets.onepassword`` and ``secrets.bitwarden`` (each off until ``enabled``):

* 1Password: ``env`` maps variable names to references (``OPENAI_API_KEY: op://Private/OpenAI/api key``), each read
  with ``op read``; ``account`` picks the account, ``binary_path`` the ``op`` program;
* Bitwarden Secrets Manager: every secret of the project ``project_id``, under its key, with ``bws secret list``;
  ``server_url`` for the EU cloud or a server of one's own.

Each CLI is used as the user signed it in: a token in the environment or ``.env`` (named by
``service_account_token_env`` and ``access_token_env``), or the 1Password app. hermes neither signs in nor installs
them. The values go into the environment before any provider reads it (1Password's first: a binding names its
variable, a project only holds it); one the environment has already is replaced only with ``override_existing``,
and a source's own token never is. A failure (no CLI, a token gone stale, a wrong reference) is one warning, and
hermes goes on with what ``.env`` had. What a source gave is kept ``cache_ttl_seconds`` (300) in
``cache/secrets-NAME.json`` of the data folder (mode 0600), so commands run back to back do not each ask the vault;
0 keeps nothing on disk. ``hermes doctor`` says what each source gave."""

from __future__ import annotations

from kernel import hookimpl

SOURCES = ("onepassword", "bitwarden")
KEYS = [  # (name, type, default, help); the sources' module is imported only where one is enabled
    ("secrets.onepassword.enabled", bool, False, "read keys from 1Password with its op CLI as hermes starts"),
    ("secrets.onepassword.env", dict, {}, "variable -> 1Password reference: {OPENAI_API_KEY: "
     "\"op://Private/OpenAI/api key\"}"),
    ("secrets.onepassword.account", str, "", "op's --account (empty: its default account)"),
    ("secrets.onepassword.service_account_token_env", str, "OP_SERVICE_ACCOUNT_TOKEN", "the variable holding a "
     "1Password service-account token, handed to op (unset: the signed-in app or session)"),
    ("secrets.onepassword.binary_path", str, "", "the op program (empty: op on PATH)"),
    ("secrets.onepassword.cache_ttl_seconds", (int, float), 300, "seconds what 1Password gave is kept in the data "
     "folder (mode 0600) for the next commands; 0: nothing kept"),
    ("secrets.onepassword.override_existing", bool, True, "1Password's value replaces one the environment or .env "
     "has"),
    ("secrets.bitwarden.enabled", bool, False, "read keys from Bitwarden Secrets Manager with its bws CLI as hermes "
     "starts"),
    ("secrets.bitwarden.access_token_env", str, "BWS_ACCESS_TOKEN", "the variable holding the machine account's "
     "access token"),
    ("secrets.bitwarden.project_id", str, "", "the project whose secrets are read, each under its key"),
    ("secrets.bitwarden.server_url", str, "", "the Bitwarden server (empty: bws's default, the US cloud)"),
    ("secrets.bitwarden.cache_ttl_seconds", (int, float), 300, "seconds what Bitwarden gave is kept in the data "
     "folder (mode 0600); 0: nothing kept"),
    ("secrets.bitwarden.override_existing", bool, True, "Bitwarden's value replaces one the environment or .env "
     "has"),
]


@hookimpl  # before hermes-compat's (trylast), which would take its keys for hermes-agent's without effect
def register_config(declare, config):
    for name, kind, default, help_ in KEYS:
        declare(name, kind, default, help_, **({"minimum": 0} if name.endswith("_seconds") else {}))
    if any(_enabled(config, name) for name in SOURCES):
        from plugins.secret_sources.sources import apply_all

        try:
            apply_all(config)
        except (TypeError, ValueError) as exc:  # a malformed setting: `hermes config check` names it
            import logging

            logging.getLogger("hermes.secrets").warning("secrets: not read (%s); going on with the keys the "
                                                        "environment and .env have", exc)


def _enabled(config, name: str) -> bool:
    data = getattr(config, "data", None) or {}
    section = (data.get("secrets") or {}).get(name) if isinstance(data.get("secrets"), dict) else None
    return isinstance(section, dict) and section.get("enabled") is True


@hookimpl(optionalhook=True)  # the doctor plugin's hook
def doctor_checks(agent):
    """Each enabled source: what it gave this start, or why nothing."""
    from plugins.secret_sources.sources import REPORTS

    if not REPORTS:
        return None
    from plugins.doctor.hookspecs import FAIL, OK, WARN, Check

    checks = []
    for name, report in REPORTS.items():
        if report.error:
            checks.append(Check("secrets", FAIL, f"secrets.{name}: {report.error}"))
            continue
        said = f"secrets.{name}: {len(report.applied)} variables set ({', '.join(report.applied) or 'none'})"
        said += f", {len(report.kept)} left as the environment had them ({', '.join(report.kept)})" * bool(report.kept)
        checks.append(Check("secrets", WARN if report.kept and not report.applied else OK,
                            said + (" (from the cache)" if report.cached else "")))
    return checks
