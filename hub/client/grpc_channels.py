"""`GrpcChannels`: the gRPC channels the hub calls partners on, one per target, reused.

A gRPC channel multiplexes every call to one server on one HTTP/2 connection, so a
partner's calls share its channel and the channel outlives the partner's client (a card
that changes builds a new client on the same channel). The owner of the pool (the
partner directory, a command) closes it, which closes every channel.

An interface URL for gRPC is `host:port` (A2A §5.8); a scheme, when a card gives one,
says whether the connection is encrypted (`grpcs://` or `https://`: TLS; `grpc://` or
`http://`: plaintext). A bare `host:port` follows the client's `tls` option, which the
hub sets from the scheme of the URL the partner's card was read from: a partner whose card
is served over HTTPS is called over TLS, and so is a partner with TLS files of its own
(agents.yaml `tls`: a private CA, a client certificate). TLS verifies the server against
the system's certificate authorities, or the partner's `ca_file`.

grpc is imported on the first channel, so a pool that is never used costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from grpc import aio  # type: ignore[import-untyped]

    from hub.trust.tls import TlsPem  # loads the settings models: annotations only

__all__ = ["GrpcChannels", "grpc_target"]

_TLS_SCHEMES = {"grpcs": True, "https": True, "grpc": False, "http": False}

# Reconnect quickly after a partner comes back (gRPC's own backoff grows to two minutes),
# and take answers as large as a hub takes requests and more (gRPC's default is 4 MiB).
_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.enable_retries", 0),
)


def grpc_target(url: str, *, tls: bool | None) -> tuple[str, bool]:
    """The channel target (`host:port`) of a gRPC interface URL and whether it uses TLS.

    Args:
        url: `host:port`, or with a scheme (`grpc://`, `grpcs://`, `http://`, `https://`);
            a path is ignored.
        tls: whether a URL without a scheme uses TLS; None for yes.

    Raises:
        ValueError: the URL names no host, no port, or a scheme gRPC does not use.
    """
    text = url.strip()
    scheme, _, rest = text.partition("://")
    if rest:
        secure = _TLS_SCHEMES.get(scheme.lower())
        if secure is None:
            raise ValueError(f"a gRPC interface URL with the scheme {scheme!r}")
        text = rest
    else:
        secure = True if tls is None else tls
    authority = urlsplit(f"//{text}").netloc
    parts = urlsplit(f"//{authority}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise ValueError("a gRPC interface URL that is not host:port")
    return authority.rsplit("@", 1)[-1], secure


class GrpcChannels:
    """The channels of one owner, by target and encryption; closed together by `aclose`."""

    def __init__(self) -> None:
        self._channels: dict[tuple[str, bool, TlsPem | None], aio.Channel] = {}

    def channel(self, target: str, *, tls: bool, files: TlsPem | None = None) -> aio.Channel:
        """The channel to `target` (made on first use, in the running event loop); with TLS,
        `files` are the CA to verify the server with and the client certificate to present."""
        key = (target, tls, files if tls else None)
        channel = self._channels.get(key)
        if channel is None:
            import grpc  # the extra, for gRPC partners only

            if tls:
                credentials = grpc.ssl_channel_credentials(
                    root_certificates=files.ca if files is not None else None,
                    private_key=files.key if files is not None else None,
                    certificate_chain=files.cert if files is not None else None,
                )
                channel = grpc.aio.secure_channel(target, credentials, options=_OPTIONS)
            else:
                channel = grpc.aio.insecure_channel(target, options=_OPTIONS)
            self._channels[key] = channel
        return channel

    def __len__(self) -> int:
        return len(self._channels)

    async def aclose(self) -> None:
        """Close every channel; calls still running on them end as canceled."""
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()
