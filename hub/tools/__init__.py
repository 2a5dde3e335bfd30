"""The tool shapes: partner agents and local skills as tools with one argument schema and one
result shape, and their exports to the OpenAI, Anthropic and MCP tool shapes."""

from hub.tools.arguments import FileArgument, ToolArguments, arguments_schema, input_schema
from hub.tools.base import DefinedTool, Tool, ToolDefinition
from hub.tools.describe import describe_agent, sanitize, tool_name
from hub.tools.remote import TOOL_PREFIX, RemoteAgentTool
from hub.tools.result import ArtifactResult, TaskFold, ToolResult
from hub.tools.skill import SKILL_PREFIX, SkillTool

__all__ = [
    "SKILL_PREFIX",
    "TOOL_PREFIX",
    "ArtifactResult",
    "DefinedTool",
    "FileArgument",
    "RemoteAgentTool",
    "SkillTool",
    "TaskFold",
    "Tool",
    "ToolArguments",
    "ToolDefinition",
    "ToolResult",
    "arguments_schema",
    "describe_agent",
    "input_schema",
    "sanitize",
    "tool_name",
]
