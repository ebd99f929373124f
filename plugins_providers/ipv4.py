"""``network.force_ipv4`` (hermes-agent's): where IPv6 is broken (a route that swallows packets instead of refusing
them), every connection to a host with both kinds of address waits out a timeout before it tries IPv4. With it,
names are looked up for IPv4 addresses first, for the whole process (the providers' SDKs, MCP servers, the web
tools); a host with no IPv4 address is still reached over IPv6."""

from __future__ import annotations


def prefer_ipv4() -> None:
    """Look names up for IPv4 first from now on (once per process)."""
    import socket

    lookup = socket.getaddrinfo
    if getattr(lookup, "ipv4_first", False):
        return

    def ipv4_first(host, port, family=0, type=0, proto=0, flags=0):
        if family == socket.AF_UNSPEC:
            try:
                return lookup(host, port, socket.AF_INET, type, proto, flags)
            except socket.gaierror:  # no IPv4 address
                pass
        return lookup(host, port, family, type, proto, flags)

    ipv4_first.ipv4_first = True
    socket.getaddrinfo = ipv4_first
