"""The HTTP face of the hub: card, JSON-RPC and REST bindings, SSE, the gateway, and the MCP
door's plugin. The app that mounts them over the hub's core is `hub.app.create_app`."""

__all__: list[str] = []
