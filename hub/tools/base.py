"""The `Tool` protocol shared by partner agents and local skills, and its export shapes.

A tool is what a language model (or any code) calls: a name, a description, a JSON Schema for
its arguments, and `call(**arguments)`. `ToolDefinition` holds the first three and renders
them in the shapes three APIs expect:

- OpenAI (Chat Completions): `{"type": "function", "function": {name, description,
  parameters}}`
- Anthropic (Messages): `{name, description, input_schema}`
- MCP (`tools/list`): `{name, description, inputSchema}`
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from hub.tools.result import ToolResult

__all__ = ["DefinedTool", "Tool", "ToolDefinition"]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool's name, description and argument schema, and their export shapes."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(repr=False)

    def to_openai(self) -> dict[str, Any]:
        """An OpenAI Chat Completions tool (`tools=[...]`)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }

    def to_anthropic(self) -> dict[str, Any]:
        """An Anthropic Messages API tool (`tools=[...]`)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def to_mcp(self) -> dict[str, Any]:
        """An MCP tool descriptor, as listed by `tools/list`."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }


class Tool(Protocol):
    """Something a model or code can call: a partner agent or a local skill."""

    @property
    def definition(self) -> ToolDefinition:
        """Name, description and argument schema, as they are now (a partner's card may
        change them)."""
        ...

    @property
    def name(self) -> str: ...

    async def call(self, **arguments: Any) -> ToolResult:
        """Run the tool with `arguments` (see `hub.tools.arguments.input_schema`).

        Raises:
            InvalidParamsError: the arguments do not match the schema.
            ClientError: the agent could not be reached or broke the protocol.
        """
        ...

    def to_openai(self) -> dict[str, Any]: ...

    def to_anthropic(self) -> dict[str, Any]: ...

    def to_mcp(self) -> dict[str, Any]: ...


class DefinedTool:
    """Base of the hub's tools: the name and the exports come from `self.definition`."""

    definition: ToolDefinition

    @property
    def name(self) -> str:
        return self.definition.name

    def to_openai(self) -> dict[str, Any]:
        return self.definition.to_openai()

    def to_anthropic(self) -> dict[str, Any]:
        return self.definition.to_anthropic()

    def to_mcp(self) -> dict[str, Any]:
        return self.definition.to_mcp()
