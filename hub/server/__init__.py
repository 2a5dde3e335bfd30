"""The HTTP face of the hub: card, JSON-RPC and REST bindings, SSE, and `create_app()`."""

from hub.server.app import create_app

__all__ = ["create_app"]
