"""The overview's and the partners page's charts in a real browser (Debian's Chromium through
Playwright), drawn from real traffic to real partners and a real plan's model calls; a
partner's card diff after its card changed; and what a credential scoped to some partners
sees of them."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, ViewportSize, expect

from hub.client import A2AClient
from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings
from hub.registry import AgentEntry
from hub.skills.echo import echo
from hub.testing import ScriptedAgent, answer, serve_hub, serve_on_loopback
from hub.testing.model_server import ToolCall, Turn, serve_model
from tests.client.scripted import Call, Receive, Send, card_document, respond
from tests.client.scripted import ScriptedAgent as RawAgent
from tests.console.accessibility import assert_accessible
from tests.console.hubs import Gates, console_hub, local_skills
from tests.orchestrator.plans import WAIT, collect, planner_for, served_partners

pytestmark = pytest.mark.anyio

WAIT_MS = 20_000
VIEWPORT: ViewportSize = {"width": 1024, "height": 640}
OPS_KEY = "ops-overview-key-4d1c9e7a2b"
ALICE_KEY = "alice-overview-key-7b3e2f9d1c"


async def _broadcast(url: str, agents: list[str], headers: dict[str, str] | None = None) -> None:
    """One swarm broadcast through the hub: one A2A request, one call to each partner."""
    body = {
        "message": {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": "how are you?"}],
        },
        "metadata": {"skill": "swarm", "strategy": "broadcast", "agents": agents},
    }
    async with httpx.AsyncClient(timeout=30) as http:
        sent = await http.post(
            f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **(headers or {})}
        )
    assert sent.status_code == 200, sent.text


async def _sum_of(line: Locator) -> float:
    """The sum of a chart line's values (one per minute; '-' for a minute without any)."""
    values = await line.get_attribute("data-values")
    assert values is not None
    return sum(float(value) for value in values.split() if value != "-")


async def _sign_in(page: Page, url: str, key: str) -> None:
    await page.goto(f"{url}/ui/")
    await page.wait_for_url("**/ui/login")
    await page.select_option("select[name=kind]", "api_key")
    await page.fill("input[name=secret]", key)
    await page.click("#login button[type=submit]")
    await expect(page.locator("#visitor")).to_be_visible()


async def test_the_overview_charts_the_calls_made_and_follows_new_ones_live(
    browser: Browser, refusing_port: int, screenshots: Path
) -> None:
    async with console_hub({"fast": 0.0, "steady": 0.02}, down_port=refusing_port) as hub:
        for _ in range(3):
            await _broadcast(hub.url, ["fast", "steady"])
        page = await browser.new_page(viewport=VIEWPORT)
        await page.goto(f"{hub.url}/ui/")
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")

        hub_traffic = page.locator("#hub-traffic")
        await expect(hub_traffic).to_have_attribute("data-requests", "3")
        requests = hub_traffic.locator('path[data-series="requests"]')
        assert await _sum_of(requests) == 3
        volume = hub_traffic.locator("svg[role=img]").first
        assert "requests: latest" in (await volume.get_attribute("aria-label") or "")
        assert "total 3" in (await volume.get_attribute("aria-label") or "")
        latency = hub_traffic.locator("svg[role=img]").nth(1)
        assert "p50: latest" in (await latency.get_attribute("aria-label") or "")
        assert "p99: latest" in (await latency.get_attribute("aria-label") or "")

        for name in ("fast", "steady"):
            section = page.locator(f'.partner-traffic[data-partner="{name}"]')
            await expect(section).to_have_attribute("data-calls", "3")
            assert await _sum_of(section.locator('path[data-series="requests"]')) == 3
            assert await _sum_of(section.locator('path[data-series="errors"]')) == 0
            await expect(section.locator(".breaker")).to_have_attribute("data-breaker", "closed")
        await expect(page.locator("#task-states svg[role=img]")).to_have_attribute(
            "aria-label",
            "Live tasks by state: submitted 0, working 0, input-required 0, auth-required 0.",
        )

        # The page is open: new calls (one to the down partner, which fails and opens its
        # breaker) reach its charts through the change stream, without a reload.
        await _broadcast(hub.url, ["fast", "down"])
        fast = page.locator('.partner-traffic[data-partner="fast"]')
        await expect(fast).to_have_attribute("data-calls", "4", timeout=WAIT_MS)
        down = page.locator('.partner-traffic[data-partner="down"]')
        await expect(down).to_have_attribute("data-errors", "1", timeout=WAIT_MS)
        await expect(down.locator(".breaker")).to_have_attribute("data-breaker", "open")
        assert await _sum_of(down.locator('path[data-series="errors"]')) == 1
        await expect(hub_traffic).to_have_attribute("data-requests", "4", timeout=WAIT_MS)
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")
        await page.screenshot(path=screenshots / "overview-charts.png", full_page=True)

        # The partners page draws each partner's health from the same history.
        await page.goto(f"{hub.url}/ui/partners")
        health = page.locator('[data-partner="fast"] .partner-health')
        await expect(health).to_have_attribute("data-calls", "4")
        assert await _sum_of(health.locator('path[data-series="requests"]')) == 4
        await page.close()


class ChangingCard:
    """Serves `document` as the partner's card, as it is when asked."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    async def __call__(self, call: Call, receive: Receive, send: Send) -> None:
        await respond(200, json.dumps(self.document).encode())(call, receive, send)


@asynccontextmanager
async def changing_partner_hub() -> AsyncIterator[tuple[str, ChangingCard]]:
    """A hub with one partner, `weather`, whose card the test changes."""
    async with AsyncExitStack() as stack:
        card = ChangingCard({})
        agent = RawAgent()
        agent.routes["GET /.well-known/agent-card.json"] = card
        url = await stack.enter_async_context(serve_on_loopback(agent))
        card.document = card_document(url, name="Weather", version="1.0.0")
        settings = Settings(store=StoreSettings(kind="memory"), default_skill="echo")
        hub = await stack.enter_async_context(
            serve_hub(
                skills=list(local_skills(Gates()).values()),
                partners=[AgentEntry(name="weather", url=url)],
                settings=settings,
            )
        )
        yield hub.url, card


async def test_the_partners_page_shows_what_a_refreshed_card_changed(
    browser: Browser, screenshots: Path
) -> None:
    async with changing_partner_hub() as (url, card):
        page = await browser.new_page(viewport=VIEWPORT)
        await page.goto(f"{url}/ui/partners")
        row = page.locator('[data-partner="weather"]')
        fetched = row.locator(".card-fetched time")
        await expect(fetched).to_be_visible()
        first_fetch = await fetched.get_attribute("datetime")
        await expect(row.locator(".card-diff")).to_have_count(0)

        forecast = {"id": "forecast", "name": "forecast", "description": "tomorrow's weather"}
        skills = [*card.document["skills"], {**forecast, "tags": []}]
        card.document = {**card.document, "version": "2.0.0", "skills": skills}
        await row.locator("button", has_text="Refresh card").click()
        await page.wait_for_url("**/ui/partners")

        diff = page.locator('[data-partner="weather"] .card-diff')
        version = diff.locator('tr[data-field="version"]')
        await expect(version).to_have_attribute("data-kind", "changed")
        await expect(version.locator("del")).to_have_text("1.0.0")
        await expect(version.locator("ins")).to_have_text("2.0.0")
        added = diff.locator('tr[data-field="skills[forecast]"]')
        await expect(added).to_have_attribute("data-kind", "added")
        await expect(added.locator("ins")).to_contain_text("tomorrow's weather")
        await expect(diff.locator("tr.change")).to_have_count(2)
        changed_at = await diff.locator("summary time").get_attribute("datetime")
        refetched = await page.locator('[data-partner="weather"] .card-fetched time').get_attribute(
            "datetime"
        )
        assert first_fetch is not None
        assert changed_at is not None
        assert refetched == changed_at >= first_fetch
        await assert_accessible(page)  # the diff's table too, as axe-core reads it
        await page.screenshot(path=screenshots / "partners-card-diff.png", full_page=True)
        await page.close()


async def test_a_credential_scoped_to_one_partner_sees_only_its_charts(browser: Browser) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="ops", api_key=OPS_KEY),
            CredentialSettings(name="alice", api_key=ALICE_KEY, agents=("fast",)),
        ),
    )
    async with console_hub({"fast": 0.0, "steady": 0.0}, auth=auth) as hub:
        await _broadcast(hub.url, ["fast", "steady"], {"X-API-Key": OPS_KEY})
        await _broadcast(hub.url, ["fast", "steady"], {"X-API-Key": OPS_KEY})
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        await _sign_in(page, hub.url, ALICE_KEY)
        await expect(page.locator("#visitor")).to_have_text("alice")

        await page.goto(f"{hub.url}/ui/")
        fast = page.locator('.partner-traffic[data-partner="fast"]')
        await expect(fast).to_have_attribute("data-calls", "2")
        assert await _sum_of(fast.locator('path[data-series="requests"]')) == 2
        await expect(page.locator(".partner-traffic")).to_have_count(1)
        assert "steady" not in await page.locator("#partner-traffic").inner_text()
        assert 'data-partner="steady"' not in await page.content()

        await page.goto(f"{hub.url}/ui/partners")
        await expect(page.locator("article.partner")).to_have_count(1)
        health = page.locator('[data-partner="fast"] .partner-health')
        await expect(health).to_have_attribute("data-calls", "2")
        assert 'data-partner="steady"' not in await page.content()
        fragment = await page.request.get(f"{hub.url}/ui/overview/fragment")
        assert fragment.ok
        assert "steady" not in await fragment.text()
        await context.close()


async def test_the_overview_charts_a_plans_tokens_and_cost_per_model(browser: Browser) -> None:
    weather = ScriptedAgent("weather", reply=answer("Sunny"))
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Paris"})], usage=(100, 20)),
        Turn(text="Sunny.", usage=(150, 5)),
    ]
    async with serve_model(script) as model, served_partners([weather]) as urls:
        skill = planner_for(model, price={"input": 2.0, "output": 10.0})
        settings = Settings(store=StoreSettings(kind="memory"))
        async with (
            serve_hub(skills=[skill], partners=urls, settings=settings) as hub,
            httpx.AsyncClient(timeout=WAIT) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            await collect(client, "Weather?")
            page = await browser.new_page(viewport=VIEWPORT)
            await page.goto(f"{hub.url}/ui/")
            usage = page.locator('.model-usage[data-model="scripted"]')
            await expect(usage).to_be_visible()
            # Two model turns: 100 + 150 input tokens, 20 + 5 output.
            assert await _sum_of(usage.locator('path[data-series="input"]')) == 250
            assert await _sum_of(usage.locator('path[data-series="output"]')) == 25
            cost = usage.locator("svg[role=img]").nth(1)
            # 250 input tokens at $2 and 25 output at $10 a million: $0.00075.
            assert "total $0.0008" in (await cost.get_attribute("aria-label") or "")
            tool_call = page.locator('.partner-traffic[data-partner="weather"]')
            await expect(tool_call).to_have_attribute("data-calls", "1")
            await page.close()


async def test_a_plans_tokens_and_cost_show_only_to_credentials_that_may_use_the_plan(
    browser: Browser,
) -> None:
    weather = ScriptedAgent("weather", reply=answer("Sunny"))
    script = [Turn(text="Sunny.", usage=(40, 4))]
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="ops", api_key=OPS_KEY),
            CredentialSettings(name="alice", api_key=ALICE_KEY, skills=("echo",)),
        ),
    )
    async with serve_model(script) as model, served_partners([weather]) as urls:
        skill = planner_for(model, price={"input": 2.0, "output": 10.0})
        settings = Settings(store=StoreSettings(kind="memory"), auth=auth)
        async with (
            serve_hub(skills=[skill, echo], partners=urls, settings=settings) as hub,
            httpx.AsyncClient(timeout=WAIT, headers={"X-API-Key": OPS_KEY}) as http,
        ):
            client = await A2AClient.from_url(hub.url, http=http)
            await collect(client, "Weather?")
            for key, sees in ((OPS_KEY, True), (ALICE_KEY, False)):
                context = await browser.new_context(viewport=VIEWPORT)
                page = await context.new_page()
                await _sign_in(page, hub.url, key)
                await page.goto(f"{hub.url}/ui/")
                usage = page.locator('.model-usage[data-model="scripted"]')
                if sees:
                    await expect(usage).to_be_visible()
                    assert await _sum_of(usage.locator('path[data-series="input"]')) == 40
                else:
                    # Her overview is drawn (its live tasks are there), without the model.
                    await expect(page.locator("#hub-traffic")).to_be_visible()
                    await expect(usage).to_have_count(0)
                    fragment = await page.request.get(f"{hub.url}/ui/overview/fragment")
                    assert fragment.ok
                    assert 'data-model="scripted"' not in await fragment.text()
                await context.close()
