"""What ``hermes plugins list`` shows, without loading the plugins while nothing they depend on changed: the
listing remembered in the host's load state, else one derived from entry-point metadata and what the last load saw."""

from __future__ import annotations

from hermes.cli.remembered import listing_stamp
from hermes.host import loadstate


def cached_listing(stamp: list) -> "list | None":
    """The plugin records (dicts) of the last listing, if nothing it depends on changed."""
    listing = loadstate.read_state().get("listing") or {}
    return listing.get("records") if listing.get("stamp") == stamp else None


def remember_listing(stamp: list, records: list) -> None:
    state = loadstate.read_state() or {"plugins": {}}
    state["listing"] = {"stamp": stamp, "records": records}
    loadstate.write_state(state)


def listing(app) -> list:
    """The plugin records, from metadata and the state of the last load; when what is installed or
    selected changed since (a fresh ``pip install``), the plugins load once to find out."""
    from hermes.host.plugins import PluginHost

    remembered = loadstate.read_state()
    if remembered.get("sources") != loadstate.stamps(loadstate.remembered_sources()):
        return app.host.records  # a plugin's code changed since the last load: load to find out
    seen = remembered.get("plugins") or {}
    # of the built-ins only the plugin sources are imported (their candidates
    # are found by code); the others' descriptions were remembered
    sources = {name for name, was in seen.items() if "discover_plugins" in (was.get("hooks") or [])}
    listed = PluginHost.discover(app.config, distro=app.distro, import_third_party=False, builtins=sources)
    if remembered.get("fingerprint") != listed.fingerprint:
        return app.host.records
    for rec in listed.records:
        was = seen.get(rec.name) or {}
        if not rec.description and was.get("version") == rec.version:
            rec.description = was.get("description") or ""
        if rec.status == "enabled" and was.get("error") and was.get("version") == rec.version:
            rec.status, rec.error = "error", was["error"]
    return listed.records


def listed(app) -> list:
    """What ``plugins list`` shows, as dicts: the last listing when none of
    the files it depends on changed (no metadata read, no plugin imported)."""
    records = cached_listing(listing_stamp())
    if records is None:
        from plugins.commands.first_run import first_run  # a default install's as shipped, until a load found more

        loaded = loadstate.read_state().get("fingerprint")  # (a built-in that failed there is said as it did)
        records = (None if loaded else first_run("records")) or [r.as_dict() for r in listing(app)]
        remember_listing(listing_stamp(), records)  # after a load, which may have noted the plugins' files
    return records
