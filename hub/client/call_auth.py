"""`CallAuth`: a credential that changes from call to call (a token the hub obtains, or one
made for the caller the call is for), asked for at each request, and asked again once when
the partner refuses it.

The client only carries it: the bindings put its value in the `Authorization` header (gRPC:
the `authorization` metadata) of each request, and after HTTP 401 or UNAUTHENTICATED send the
request once more with the fresh value `rejected` gives. Where its tokens come from is
`hub.identity.partner_auth`'s.
"""

from __future__ import annotations

from typing import Protocol

from hub.protocol.urls import LOOPBACK_HOSTS

__all__ = ["CallAuth", "is_secure"]


class CallAuth(Protocol):
    """The `Authorization` value of each call to one partner."""

    async def authorization(self, *, secure: bool) -> str | None:
        """The value the call carries now; None leaves the entry's own headers as they are.

        Args:
            secure: the call goes over TLS, or to the loopback address.

        Raises:
            PartnerAuthError: no value can be had (nothing is sent to the partner).
        """
        ...

    async def rejected(self, authorization: str) -> str | None:
        """The partner refused `authorization`: a fresh value to send the request with once
        more, or None when there is none other to try.

        Raises:
            PartnerAuthError: no fresh value can be had.
        """
        ...


def is_secure(scheme: str, host: str) -> bool:
    """Whether a request to `scheme://host` is protected on the way: TLS, or loopback."""
    return scheme in ("https", "grpcs") or host in LOOPBACK_HOSTS
