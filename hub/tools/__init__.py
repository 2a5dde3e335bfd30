"""Partner agents and local skills as tools, with exports to the OpenAI, Anthropic and MCP
tool shapes."""

from hub.tools.arguments import FileArgument, ToolArguments, arguments_schema, input_schema
from hub.tools.base import DefinedTool, Tool, ToolDefinition
from hub.tools.children import PartnerChildren
from hub.tools.describe import describe_agent, sanitize, tool_name
from hub.tools.partners import PartnerHealth, Partners
from hub.tools.remote import TOOL_PREFIX, RemoteAgentTool
from hub.tools.result import ArtifactResult, TaskFold, ToolResult
from hub.tools.runtime_partners import FederationPolicy, RuntimePartner, RuntimePartners
from hub.tools.skill import SKILL_PREFIX, SkillTool
from hub.tools.stats import CallStats, StatsBook
from hub.tools.toolbox import Toolbox

__all__ = [
    "SKILL_PREFIX",
    "TOOL_PREFIX",
    "ArtifactResult",
    "CallStats",
    "DefinedTool",
    "FederationPolicy",
    "FileArgument",
    "PartnerChildren",
    "PartnerHealth",
    "Partners",
    "RemoteAgentTool",
    "RuntimePartner",
    "RuntimePartners",
    "SkillTool",
    "StatsBook",
    "TaskFold",
    "Tool",
    "ToolArguments",
    "ToolDefinition",
    "ToolResult",
    "Toolbox",
    "arguments_schema",
    "describe_agent",
    "input_schema",
    "sanitize",
    "tool_name",
]
