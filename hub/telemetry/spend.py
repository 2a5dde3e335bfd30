"""What each caller has spent over its budget's window, and the refusal once a budget is
spent (`SpendBook`).

A caller is a credential's name (the `CallScope`'s `caller`). Three things are counted, where
they happen (through the hooks of `hub.telemetry.budgets`): a message sent to a partner
(`A2AClient.send` and `stream`, whichever door or skill sent it: the gateway, a skill's
tools, a swarm branch, an orchestrator's call) and the tokens and cost of an orchestrator's
model step. A partner call past `partner_calls` is
refused before it is sent; a model step is refused once the tokens or the cost spent reach
their limit (the step that crosses one is let through: its size is known only after it).

The window slides by sixtieths: each caller's spend is kept in 60 buckets of `window / 60`
seconds, so memory per caller is bounded whatever the traffic, and spend leaves the window
at most one bucket late. Each process keeps its own book (as it keeps its own request
rates, `hub/server/ratelimit.py`): on replicas, each enforces the budget on its own traffic.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hub.errors import BudgetExhaustedError

if TYPE_CHECKING:  # a client that only calls partners loads no settings models
    from hub.config import BudgetSettings

__all__ = ["DEFAULT_WINDOW", "Spend", "SpendBook"]

DEFAULT_WINDOW = 3600.0
"""The window a caller without a budget's spend is shown over."""

_BUCKETS = 60


@dataclass(frozen=True, slots=True, kw_only=True)
class Spend:
    """A caller's spend within its window, and the budget it is held to (None: none)."""

    window: float
    partner_calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    budget: BudgetSettings | None = None


class _Account:
    """One caller's buckets: index → [partner calls, tokens, cost]."""

    __slots__ = ("buckets", "step", "window")

    def __init__(self, window: float) -> None:
        self.window = window
        self.step = window / _BUCKETS
        self.buckets: dict[int, list[float]] = {}

    def _current(self, now: float) -> int:
        index = int(now // self.step)
        oldest = index - _BUCKETS
        for stale in [key for key in self.buckets if key <= oldest]:
            del self.buckets[stale]
        return index

    def add(self, now: float, *, calls: int = 0, tokens: int = 0, cost: float = 0.0) -> None:
        bucket = self.buckets.setdefault(self._current(now), [0.0, 0.0, 0.0])
        bucket[0] += calls
        bucket[1] += tokens
        bucket[2] += cost

    def totals(self, now: float) -> tuple[int, int, float]:
        self._current(now)
        calls = sum(bucket[0] for bucket in self.buckets.values())
        tokens = sum(bucket[1] for bucket in self.buckets.values())
        cost = sum(bucket[2] for bucket in self.buckets.values())
        return int(calls), int(tokens), cost

    def frees(self, now: float, field: int, used: float, limit: float) -> float:
        """Seconds until enough of the oldest spend of `field` leaves the window for the
        total to be under `limit` again."""
        left = used
        for index in sorted(self.buckets):
            left -= self.buckets[index][field]
            if left < limit:
                return max(0.0, (index + 1 + _BUCKETS) * self.step - now)
        return self.window


class SpendBook:
    """Every caller's spend over its window, and the budgets they are held to.

    Args:
        budgets: the budget of each caller that has one, by caller name (the credentials'
            `budget`); a caller let in some other way is given its own with `know`.
        clock: seconds, monotonic.
    """

    def __init__(
        self,
        budgets: Mapping[str, BudgetSettings] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._budgets: dict[str, BudgetSettings] = dict(budgets or {})
        self._accounts: dict[str, _Account] = {}
        self._clock = clock

    def know(self, caller: str, budget: BudgetSettings | None) -> None:
        """Hold `caller` to `budget` from now on (None: to none)."""
        if budget is None:
            self._budgets.pop(caller, None)
        else:
            self._budgets[caller] = budget

    def spent(self, caller: str) -> Spend:
        """`caller`'s spend within its window now."""
        budget = self._budgets.get(caller)
        account = self._account(caller)
        calls, tokens, cost = account.totals(self._clock())
        return Spend(
            window=account.window, partner_calls=calls, tokens=tokens, cost=cost, budget=budget
        )

    def charge_partner_call(self, caller: str, partner: str) -> None:
        """Count one message `caller` sends to `partner`.

        Raises:
            BudgetExhaustedError: the caller has sent `partner_calls` messages within its
                window already; nothing is counted.
        """
        budget = self._budgets.get(caller)
        account = self._account(caller)
        now = self._clock()
        if budget is not None and budget.partner_calls is not None:
            used = account.totals(now)[0]
            if used >= budget.partner_calls:
                wait = account.frees(now, 0, used, budget.partner_calls)
                raise self._refusal(
                    caller,
                    "partner_calls",
                    f"{used} partner calls",
                    f"{budget.partner_calls}",
                    wait,
                    action=f"the call to partner '{partner}' was not sent",
                )
        account.add(now, calls=1)

    def check_model(self, caller: str) -> None:
        """Refuse `caller`'s next model step if its tokens or cost budget is spent.

        Raises:
            BudgetExhaustedError: the tokens or the cost spent within the window reached the
                budget's limit.
        """
        budget = self._budgets.get(caller)
        if budget is None or (budget.tokens is None and budget.cost is None):
            return
        account = self._account(caller)
        now = self._clock()
        _, tokens, cost = account.totals(now)
        checks: list[tuple[str, int, float, float, str, str]] = []
        if budget.tokens is not None:
            checks.append(
                ("tokens", 1, tokens, budget.tokens, f"{tokens} tokens", f"{budget.tokens}")
            )
        if budget.cost is not None:
            checks.append(("cost", 2, cost, budget.cost, f"${cost:.4f}", f"${budget.cost:g}"))
        for name, field, used, limit, spent, shown in checks:
            if used >= limit:
                wait = account.frees(now, field, used, limit)
                raise self._refusal(
                    caller, name, spent, shown, wait, action="the model step was not taken"
                )

    def add_model(self, caller: str, *, tokens: int, cost: float) -> None:
        """Count a model step's tokens and cost against `caller`."""
        self._account(caller).add(self._clock(), tokens=tokens, cost=cost)

    def _account(self, caller: str) -> _Account:
        budget = self._budgets.get(caller)
        window = budget.window if budget is not None else DEFAULT_WINDOW
        account = self._accounts.get(caller)
        if account is None or account.window != window:  # new, or its budget changed
            account = self._accounts[caller] = _Account(window)
        return account

    def _refusal(
        self, caller: str, name: str, used: str, limit: str, wait: float, *, action: str
    ) -> BudgetExhaustedError:
        budget = self._budgets[caller]
        seconds = max(1, math.ceil(wait))
        error = BudgetExhaustedError(
            f"credential '{caller}' has spent its {name} budget: {used} in the last "
            f"{_duration(budget.window)}, its limit is {limit} (auth.credentials[].budget."
            f"{name}); {action}; retry in {seconds} s",
            retry_after=wait,
            metadata={
                "caller": caller,
                "budget": name,
                "limit": limit,
                "spent": used,
                "window": f"{budget.window:g}s",
            },
        )
        return error


def _duration(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"
