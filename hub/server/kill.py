"""The kill switch: every task of a context or of a caller that is not terminal, canceled at
once with the partner tasks they started, by an operator (`KillSwitch.kill`, the one
operation), and its door `POST /admin/kill` (`a2a-hub kill` calls it; the console's buttons
call the operation in the visitor's name). A kill of a caller also cancels, at the partners,
the partner tasks that caller started through the gateway (`GatewayKill`); a kill of a
context does not reach those, whose contexts are the partners'.

Only an operator may use it: a credential with `operator: true`, or anyone with auth off,
where every caller may cancel every task anyway. Each kill writes one line to the
`hub.audit` logger: who did it, what it named, how many tasks and partner tasks it ended.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any

from litestar import Request, post
from litestar.response import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hub.config.callers import Caller
from hub.errors import InvalidParamsError, OperatorOnlyError, ProtocolError
from hub.server.errors import rest_error_response
from hub.server.gateway import GatewayKill
from hub.tasks import KillReport, KillTarget, TaskManager
from hub.telemetry.access import note_refusal

__all__ = ["KILL_PATH", "KILL_ROUTES", "KillSwitch", "kill_summary"]

audit = logging.getLogger("hub.audit")

KILL_PATH = "/admin/kill"

AnyRequest = Request[Any, Any, Any]


class KillRequest(BaseModel):
    """The body of `POST /admin/kill`: exactly one of `contextId` or `caller`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    context_id: str | None = Field(default=None, alias="contextId", min_length=1)
    caller: str | None = Field(default=None, min_length=1)

    def target(self) -> KillTarget:
        """The kill it asks for.

        Raises:
            InvalidParamsError: it names neither or both.
        """
        if (self.context_id is None) == (self.caller is None):
            raise InvalidParamsError(
                'name exactly one of "contextId" or "caller", e.g. {"caller": "alice"}'
            )
        return KillTarget(context_id=self.context_id, caller=self.caller)


@dataclass(slots=True, kw_only=True)
class KillSwitch:
    """The kill switch over the hub's task manager and the gateway's partner tasks."""

    manager: TaskManager
    gateway: GatewayKill

    async def kill(self, target: KillTarget, *, by: Caller) -> KillReport:
        """End every open task of `target` and the partner tasks they started (for a caller,
        those it started through the gateway too), in `by`'s name, and write the audit line.

        Raises:
            OperatorOnlyError: `by` is not an operator.
        """
        who = f"credential '{by.name}'" if by.name else f"address {by.address or '?'}"
        if not by.operator:
            note_refusal(OperatorOnlyError.reason)
            audit.warning("kill of %s refused: %s is not an operator", target.describe(), who)
            raise OperatorOnlyError(
                f"{who} may not use the kill switch; an operator's credential has "
                "operator: true in auth.credentials"
            )
        report = await self.manager.kill(target)
        if target.caller is not None:
            reached = await self.gateway.kill(target.caller)
            report = replace(report, gateway_tasks=reached.canceled, gateway_failed=reached.failed)
        audit.warning(
            "kill of %s by %s: %s%s",
            target.describe(),
            who,
            kill_summary(target, report),
            f" ({', '.join(report.tasks)})" if report.tasks else "",
            extra={
                "audit": {
                    "action": "kill",
                    "target": target.describe(),
                    "by": by.name,
                    "address": by.address,
                    "tasks": list(report.tasks),
                    "partner_tasks": report.partner_tasks,
                    "gateway_tasks": report.gateway_tasks,
                    "gateway_failed": report.gateway_failed,
                }
            },
        )
        return report


def kill_summary(target: KillTarget, report: KillReport) -> str:
    """What a kill ended, as the audit line and the console say it."""
    said = (
        f"canceled {len(report.tasks)} tasks and {report.partner_tasks} partner tasks they started"
    )
    if target.caller is None:
        return said
    said += f", and {report.gateway_tasks} partner tasks it started through the gateway"
    if report.gateway_failed:
        said += f" ({report.gateway_failed} could not be canceled)"
    return said


def report_json(target: KillTarget, report: KillReport) -> bytes:
    """The answer to a kill: what it named and what it ended."""
    return json.dumps(
        {
            "target": target.describe(),
            "canceled": list(report.tasks),
            "partnerTasks": report.partner_tasks,
            "gatewayTasks": report.gateway_tasks,
            "gatewayFailed": report.gateway_failed,
        }
    ).encode()


@post(KILL_PATH, status_code=200)
async def kill(request: AnyRequest) -> Response[bytes]:
    """Cancel every open task of a context or a caller, and their partner tasks."""
    hub = request.app.state.hub
    client = request.client
    try:
        caller = await hub.gate.admit(request.headers, address=client.host if client else "")
        try:
            body = KillRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'body'}: {error['msg']}"
                for error in exc.errors(include_url=False, include_input=False)
            )
            raise InvalidParamsError(
                f'the body must be {{"contextId": "..."}} or {{"caller": "..."}}: {problems}'
            ) from None
        target = body.target()
        report = await hub.kill_switch.kill(target, by=caller)
    except ProtocolError as error:
        return rest_error_response(error)
    return Response(
        content=report_json(target, report),
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


KILL_ROUTES = [kill]
