"""The refusals of `hub.identity`, importable without its extra: the server catches them
whether or not `auth.oidc` is set."""

from __future__ import annotations

__all__ = ["InvalidTokenError"]


class InvalidTokenError(Exception):
    """A bearer token that is not let in; the message says why, never what was sent."""
