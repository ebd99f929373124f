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


@hookimpl  # before hermes-compat's (trylast), which would take its keys for hermes-agent's without effect
def register_config(declare, config):
    from plugins.secret_sources.sources import CONFIG_KEYS, apply_all

    for key in CONFIG_KEYS:
        declare(key)
    if any(_enabled(config, name) for name in SOURCES):
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
