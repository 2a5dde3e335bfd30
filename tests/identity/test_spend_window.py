"""The spend book's window: spend leaves it as the window slides (in sixtieths), a refusal
says when enough will have left, a caller's budget is its own, and a changed budget starts
a fresh count."""

from __future__ import annotations

import pytest

from hub.config import BudgetSettings
from hub.errors import BudgetExhaustedError
from hub.telemetry.spend import SpendBook


def test_calls_leave_the_window_as_it_slides_and_the_refusal_says_when() -> None:
    now = [0.0]
    budget = BudgetSettings.model_validate({"window": "60s", "partner_calls": 2})
    book = SpendBook({"bob": budget}, clock=lambda: now[0])
    book.charge_partner_call("bob", "p")
    now[0] = 30.0
    book.charge_partner_call("bob", "p")
    with pytest.raises(BudgetExhaustedError) as refused:
        book.charge_partner_call("bob", "p")
    assert refused.value.retry_after == pytest.approx(31.0)  # the first call's second
    assert refused.value.metadata["spent"] == "2 partner calls"
    book.charge_partner_call("carol", "p")  # another caller, no budget

    now[0] = 61.5
    book.charge_partner_call("bob", "p")  # the first call has left the window
    assert book.spent("bob").partner_calls == 2
    assert book.spent("carol").partner_calls == 1  # without a budget: an hour's window


def test_a_caller_without_a_budget_is_counted_over_an_hour_and_never_refused() -> None:
    now = [0.0]
    book = SpendBook(clock=lambda: now[0])
    for _ in range(100):
        book.charge_partner_call("carol", "p")
    book.add_model("carol", tokens=5_000, cost=2.5)
    book.check_model("carol")
    spend = book.spent("carol")
    assert (spend.window, spend.partner_calls, spend.tokens, spend.cost) == (3600, 100, 5_000, 2.5)
    now[0] = 3700.0
    assert book.spent("carol").partner_calls == 0


def test_a_budget_given_later_holds_the_caller_from_then_on() -> None:
    book = SpendBook()
    book.add_model("dave", tokens=500, cost=0.0)
    book.know("dave", BudgetSettings(window=3600, tokens=100))  # same window: spend kept
    with pytest.raises(BudgetExhaustedError, match="its tokens budget: 500 tokens"):
        book.check_model("dave")
    book.know("dave", BudgetSettings(window=600, tokens=100))  # a new window: a new count
    book.add_model("dave", tokens=150, cost=0.0)
    with pytest.raises(BudgetExhaustedError, match="its tokens budget: 150 tokens"):
        book.check_model("dave")
    book.know("dave", None)
    book.check_model("dave")
