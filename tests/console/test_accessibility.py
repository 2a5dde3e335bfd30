"""Every console page passes axe-core (no serious or critical violation), in the light
palette and in the dark one, against a hub with real partners and real tasks."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.async_api import Browser, Page, expect

from hub.config import AuthSettings, CredentialSettings
from scripts.console_screenshots import settle
from tests.console.accessibility import assert_accessible, serious_violations
from tests.console.hubs import console_hub, send

pytestmark = pytest.mark.anyio

KEY = "accessible-console-key-7d1e4b9a2c"
Scheme = Literal["light", "dark"]
SCHEMES: tuple[Scheme, ...] = ("light", "dark")
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(20, 23, 28)"}
"""The page's background in each palette (console.css): the dark one is in force."""


async def visit(page: Page, url: str) -> None:
    """Open `url` and wait for the page as a visitor sees it (live regions following)."""
    await page.goto(url)
    await settle(page)


async def background(page: Page) -> str:
    shown: str = await page.evaluate("getComputedStyle(document.body).backgroundColor")
    return shown


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_every_page_passes_axe(browser: Browser, refusing_port: int, scheme: Scheme) -> None:
    partners = {"quick": 0.05, "slow-a": 30.0, "slow-b": 30.0}
    async with console_hub(partners, down_port=refusing_port) as hub:
        # Real traffic: a race swarm (a tree with a winner and canceled branches), a
        # broadcast that opens the down partner's breaker, a task waiting for input.
        race = await send(
            hub.url, "who is first?", skill="swarm", strategy="race", agents=list(partners)
        )
        await send(
            hub.url, "all of you", skill="swarm", strategy="broadcast", agents=["quick", "down"]
        )
        asking = await send(hub.url, "greet me", skill="ask")
        await send(hub.url, "hello there", skill="echo")
        context = await browser.new_context(
            color_scheme=scheme, viewport={"width": 1024, "height": 640}
        )
        page = await context.new_page()
        ui = f"{hub.url}/ui"
        found: list[str] = []
        for path in (
            "/",
            "/partners",
            "/partners/route?text=who+is+first",
            "/tasks",
            f"/tasks/{race['id']}",
            f"/tasks/{asking['id']}",
            "/chat",
            "/tasks/no-such-task",
        ):
            await visit(page, ui + path)
            found += await serious_violations(page)
            assert await background(page) == BACKGROUND[scheme]
        # A partner's task, reached through the gateway from the tree's link.
        await visit(page, f"{ui}/tasks/{race['id']}")
        link = page.locator('#delegation li.branch[data-agent="quick"] a')
        await visit(page, hub.url + (await link.get_attribute("href") or ""))
        found += await serious_violations(page)
        await context.close()
    assert not found, "axe-core:\n" + "\n".join(found)


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_the_sign_in_pages_pass_axe(browser: Browser, scheme: Scheme) -> None:
    auth = AuthSettings(enabled=True, credentials=(CredentialSettings(name="ops", api_key=KEY),))
    async with console_hub({}, auth=auth) as hub:
        context = await browser.new_context(color_scheme=scheme)
        page = await context.new_page()
        await visit(page, f"{hub.url}/ui/login")
        found = await serious_violations(page)
        await page.fill("input[name=secret]", "not-a-valid-key-at-all")
        await page.click("#login button[type=submit]")
        await expect(page.locator("#refused")).to_be_visible(timeout=15_000)
        found += await serious_violations(page)
        await page.fill("input[name=secret]", KEY)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("ops", timeout=15_000)
        await visit(page, f"{hub.url}/ui/tasks")
        found += await serious_violations(page)
        await context.close()
    assert not found, "axe-core:\n" + "\n".join(found)


async def test_the_check_names_the_rule_the_element_and_the_impact(browser: Browser) -> None:
    async with console_hub({}) as hub:
        page = await browser.new_page(color_scheme="light")
        await visit(page, f"{hub.url}/ui/")
        await assert_accessible(page)
        # An image with no text alternative, and text that cannot be read on its background.
        await page.evaluate(
            """() => {
                const image = document.createElement("img");
                image.id = "unnamed";
                document.querySelector("main").append(image);
                const faint = document.createElement("p");
                faint.id = "faint";
                faint.textContent = "hard to read";
                faint.style.color = "rgb(170, 170, 170)";
                document.querySelector("main").append(faint);
            }"""
        )
        with pytest.raises(AssertionError) as refused:
            await assert_accessible(page)
        said = str(refused.value)
        assert "image-alt (critical)" in said
        assert "#unnamed" in said
        assert "color-contrast (serious)" in said
        assert "#faint" in said
        await page.close()
