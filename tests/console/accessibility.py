"""axe-core run inside the page a test's chromium shows: a console page passes when axe
finds no violation of impact "serious" or "critical".

The engine is the axe.min.js that the `axe-playwright-python` wheel ships (a test
dependency), evaluated in the page as it stands, so nothing is fetched at test time. Axe runs
its default rules: WCAG 2.x A and AA (colour contrast among them) and its best practices.
Evaluating the engine through Playwright is not an inline script of the page: the console's
Content-Security-Policy stays as it is served.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import axe_playwright_python
from playwright.async_api import Page

AXE_JS = Path(axe_playwright_python.__file__).with_name("axe.min.js")
"""axe-core's engine, as the wheel ships it."""

FAILING = frozenset({"serious", "critical"})
"""The impacts that fail a page."""


@dataclass(frozen=True)
class Violation:
    """One rule a page breaks, with the elements that break it."""

    rule: str
    impact: str
    help: str
    elements: tuple[tuple[str, str], ...]
    """Each element that breaks the rule (its CSS selector) and what axe says of it."""

    def lines(self) -> list[str]:
        head = f"{self.rule} ({self.impact}): {self.help}"
        return [head, *(f"  {target}: {detail}" for target, detail in self.elements)]


def _violations(results: dict[str, Any]) -> list[Violation]:
    found = []
    for rule in results["violations"]:
        found.append(
            Violation(
                rule=rule["id"],
                impact=rule.get("impact") or "unknown",
                help=rule["help"],
                elements=tuple(
                    (" ".join(map(str, node["target"])), _detail(node)) for node in rule["nodes"]
                ),
            )
        )
    return found


def _detail(node: dict[str, Any]) -> str:
    """What axe says about one element, e.g. the contrast ratio it measured."""
    checks = [*node.get("any", []), *node.get("all", []), *node.get("none", [])]
    messages = [check["message"] for check in checks if check.get("message")]
    return "; ".join(messages) or node.get("failureSummary", "")


@cache
def _engine() -> str:
    return AXE_JS.read_text(encoding="utf-8")


async def axe_violations(page: Page) -> list[Violation]:
    """Every violation axe finds on the page as it is now, whatever its impact."""
    if not await page.evaluate("typeof window.axe === 'object'"):
        await page.evaluate(_engine())
    results: dict[str, Any] = await page.evaluate(
        "() => axe.run(document, { resultTypes: ['violations'] })"
    )
    return _violations(results)


async def serious_violations(page: Page) -> list[str]:
    """The page's serious and critical violations, one readable line per rule and per
    element (rule, impact, help; the element and what axe measured there)."""
    failing = [found for found in await axe_violations(page) if found.impact in FAILING]
    return [f"{page.url}: {line}" for found in failing for line in found.lines()]


async def assert_accessible(page: Page) -> None:
    """Fail with that list when axe finds a serious or critical violation on the page."""
    found = await serious_violations(page)
    assert not found, "axe-core:\n" + "\n".join(found)
