"""Whether the `grpc` extra is installed, and the command that installs it.

Asked without importing grpc or protobuf (a module look-up only), so a hub that never meets
gRPC pays nothing for the question: the client asks it when a card offers gRPC, and a
configuration that needs gRPC names `INSTALL` when the answer is no.
"""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec

__all__ = ["INSTALL", "grpc_installed"]

INSTALL = "pip install 'a2a-hub[grpc]'"
"""The command that installs the extra."""


@cache
def grpc_installed() -> bool:
    """True when grpcio, protobuf and googleapis-common-protos can be imported."""
    try:
        return all(
            find_spec(name) is not None for name in ("grpc", "google.protobuf", "google.rpc")
        )
    except ModuleNotFoundError:  # `google` itself is absent
        return False
