"""Where an LLM call went: whether a ``base_url`` is this machine or a private network (standard library
only, so the streaming ``inspect`` can tell an unpriceable run without loading the cost ledger)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def local_host(base_url: str) -> str | None:
    """The host when `base_url` points at this machine or a private network, else None."""
    try:
        host = urlsplit(base_url).hostname or ""
    except ValueError:
        return None
    if host in ("localhost", "0.0.0.0") or host.endswith((".local", ".localhost", ".internal")):  # noqa: S104
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if address.is_loopback or address.is_private or address.is_link_local else None
