"""The hub as an MCP server: its partners and local skills as MCP tools.

Needs the `mcp` extra (`pip install 'a2a-hub[mcp]'`). `hub.server` mounts it at `/mcp`;
`a2a-hub mcp` serves it on stdio. See docs/mcp.md.
"""

from hub.mcp.catalog import Catalog, ToolCall, UnknownToolError
from hub.mcp.server import CALL_SCOPE_KEY, HubMcpServer, attach_scope

__all__ = [
    "CALL_SCOPE_KEY",
    "Catalog",
    "HubMcpServer",
    "ToolCall",
    "UnknownToolError",
    "attach_scope",
]
