"""The budget hooks instrumented code calls: a partner call or a model step of the current
caller (the `CallScope`'s), charged to the current hub's `SpendBook` (its `Telemetry`'s),
and refused when the caller's budget is spent. Outside a hub's app, or outside any call
scope, they count and refuse nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hub.errors import BudgetExhaustedError
from hub.protocol.trace import current_scope
from hub.telemetry.context import current_telemetry

if TYPE_CHECKING:
    from hub.telemetry.spend import SpendBook

__all__ = ["charge_partner_call", "check_model_budget", "note_model_spend"]


def _refused(error: BudgetExhaustedError) -> None:
    """Count the refusal (on the request's access line too, inside one). Only a hub's app
    has a book, and it has loaded the server's request entry already: a client that calls
    partners outside one does not load it."""
    from hub.telemetry.access import note_refusal

    note_refusal(error.reason)


def _book() -> tuple[SpendBook, str] | None:
    """The current hub's book and the current caller, when both are known."""
    book = current_telemetry().spend
    scope = current_scope()
    if book is None or scope is None:
        return None
    return book, scope.caller


def charge_partner_call(partner: str) -> None:
    """Count one message to `partner` against the current caller (`SpendBook`).

    Raises:
        BudgetExhaustedError: the caller's `partner_calls` budget is spent.
    """
    found = _book()
    if found is not None:
        try:
            found[0].charge_partner_call(found[1], partner)
        except BudgetExhaustedError as refused:
            _refused(refused)
            raise


def check_model_budget() -> None:
    """Refuse the current caller's next model step if its budget is spent.

    Raises:
        BudgetExhaustedError: the caller's `tokens` or `cost` budget is spent.
    """
    found = _book()
    if found is not None:
        try:
            found[0].check_model(found[1])
        except BudgetExhaustedError as refused:
            _refused(refused)
            raise


def note_model_spend(*, tokens: int, cost: float) -> None:
    """Count a model step's tokens and cost against the current caller."""
    found = _book()
    if found is not None:
        found[0].add_model(found[1], tokens=tokens, cost=cost)
