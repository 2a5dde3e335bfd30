"""Partner URLs: where a card is read from, and how a URL is shown.

A partner's URL may carry a secret: a token in its query (`?key=...`) or a user and
password. It is sent only on the wire to that partner; every log line, error message, span
attribute and console page shows `shown_url(url)` instead.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["CARD_PATH", "LOOPBACK_HOSTS", "card_url", "shown_url"]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
"""The host names plain HTTP is accepted to, for a request that carries credentials."""

CARD_PATH = "/.well-known/agent-card.json"


def card_url(url: str) -> str:
    """The card URL for a partner URL: a URL whose path ends in `.json` is the card itself;
    any other is a base URL whose card is at `CARD_PATH` below its path, its query kept (a
    partner that takes a token in the query wants it on the card's request too)."""
    parts = urlsplit(url)
    if parts.path.endswith(".json"):
        return url
    path = parts.path.rstrip("/") + CARD_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def shown_url(url: str | None) -> str:
    """`url` as logs, errors, spans and the console show it: scheme, host, port and path;
    no user, password, query or fragment, which may hold secrets."""
    if not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL that splits (a bad port): show only what cannot leak
        return url.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    if ":" in host:
        host = f"[{host}]"
    if port is not None:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
