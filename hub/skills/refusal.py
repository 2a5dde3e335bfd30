"""A built-in skill refusing what its task asks, after the task exists: the task ends
REJECTED, its status message saying why and its metadata carrying the error a refused
request would have had (`code`, `status`, `reason`, `fieldViolations`)."""

from __future__ import annotations

from hub.errors import ProtocolError
from hub.protocol import JsonObject, TaskState
from hub.skills.context import SkillContext

__all__ = ["ERROR_METADATA_KEY", "reject"]

ERROR_METADATA_KEY = "a2a-hub/error"
"""Where a REJECTED task's status message carries its error."""


async def reject(ctx: SkillContext, message: str, error: ProtocolError) -> None:
    """End `ctx`'s task REJECTED with `message`, carrying `error` under
    `ERROR_METADATA_KEY`."""
    info: JsonObject = {"code": error.code, "status": error.rpc_status, "reason": error.reason}
    if error.violations:
        info["fieldViolations"] = [
            {"field": field, "description": description} for field, description in error.violations
        ]
    await ctx.finish(TaskState.REJECTED, message, metadata={ERROR_METADATA_KEY: info})
