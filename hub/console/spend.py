"""The spend page (`/spend`): what each caller has spent within its budget's window
(partner calls, model tokens, model cost) beside its limits, read from the hub's
`SpendBook`; a visitor sees its own line, an operator every credential's, each with a button
that kills the caller's tasks. The kill buttons (there, and "Kill context" on a task page)
post to `/kill`, which calls the kill switch (`hub.server.kill.KillSwitch`) in the
visitor's name, as `POST /admin/kill` does: the same operator check, audit line and answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from litestar import get, post
from litestar.response import Template

from hub.console.access import AnyRequest, Visitor, form_of, hub_of, visitor_of
from hub.console.render import page, problem
from hub.errors import InvalidParamsError, ProtocolError
from hub.server.kill import kill_summary
from hub.tasks import KillTarget
from hub.telemetry.spend import DEFAULT_WINDOW, Spend

__all__ = ["SPEND_ROUTES"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpendLine:
    """One caller's spend as the page shows it: each figure with its limit ("" for none)."""

    caller: str
    window: str
    partner_calls: str
    tokens: str
    cost: str


def _line(caller: str, spend: Spend) -> SpendLine:
    budget = spend.budget

    def of(text: str, limit: str | None) -> str:
        return text if limit is None else f"{text} of {limit}"

    return SpendLine(
        caller=caller or "(anonymous)",
        window=f"{spend.window / 60:g} min",
        partner_calls=of(
            str(spend.partner_calls),
            None if budget is None or budget.partner_calls is None else str(budget.partner_calls),
        ),
        tokens=of(
            str(spend.tokens),
            None if budget is None or budget.tokens is None else str(budget.tokens),
        ),
        cost=of(
            f"${spend.cost:.4f}",
            None if budget is None or budget.cost is None else f"${budget.cost:g}",
        ),
    )


def _lines(request: AnyRequest, visitor: Visitor) -> list[SpendLine]:
    """The visitor's line, or every credential's for an operator (with auth on)."""
    hub = hub_of(request)
    book = hub.observability.telemetry.spend
    names = [visitor.name]
    if visitor.caller.operator and hub.settings.auth.enabled:
        names = [credential.name for credential in hub.settings.auth.credentials]
    if book is None:
        return [_line(name, Spend(window=DEFAULT_WINDOW)) for name in names]
    return [_line(name, book.spent(name)) for name in names]


def _spend_page(request: AnyRequest, visitor: Visitor, *, killed: str | None) -> Template:
    return page(
        request,
        visitor,
        "spend.html",
        lines=_lines(request, visitor),
        operator=visitor.caller.operator,
        killed=killed,
    )


@get("/spend")
async def spend_page(request: AnyRequest) -> Template:
    return _spend_page(request, visitor_of(request), killed=None)


@post("/kill", status_code=200)
async def kill(request: AnyRequest) -> Template:
    """Kill the tasks of the context or the caller the form names, as the visitor; the
    spend page again, saying what ended."""
    visitor = visitor_of(request)
    fields = await form_of(request, visitor)
    context_id = fields.get("context", "").strip() or None
    caller = fields.get("caller", "").strip() or None
    try:
        if (context_id is None) == (caller is None):
            raise InvalidParamsError("name exactly one of a context or a caller to kill")
        target = KillTarget(context_id=context_id, caller=caller)
        report = await hub_of(request).kill_switch.kill(target, by=visitor.caller)
    except ProtocolError as error:
        return problem(request, visitor, error)
    killed = f"killed {target.describe()}: {kill_summary(target, report)}"
    return _spend_page(request, visitor, killed=killed)


SPEND_ROUTES = [spend_page, kill]
