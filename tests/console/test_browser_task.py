"""The task page in a real browser (Debian's chromium through Playwright) against hubs on
loopback with real partners: a streamed answer read as one text, a plan's transcript and
waterfall filling in live (a real orchestrator on the scripted model server), the link to
the task's trace, and a scoped credential kept out of another's task."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings, UiSettings
from hub.skills import SkillContext, skill
from hub.testing import serve_hub
from hub.testing.model_server import ToolCall, Turn, serve_model
from tests.console.accessibility import assert_accessible
from tests.console.hubs import console_hub
from tests.orchestrator.plans import planner_for
from tests.streamed_text import CHUNKS, WHOLE, tokens

pytestmark = pytest.mark.anyio

WAIT_MS = 30_000
VIEWPORT: ViewportSize = {"width": 1024, "height": 640}
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACE_URL = "http://jaeger.example:16686/trace/{trace_id}"
ALICE_KEY = "alice-task-page-key-7d1e5b3a9c"
BOB_KEY = "bob-task-page-key-2f8c6a4e0d"


async def _send(url: str, text: str, headers: dict[str, str], **metadata: Any) -> httpx.Response:
    body = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        "metadata": metadata or None,
        "configuration": {"returnImmediately": True},
    }
    async with httpx.AsyncClient(timeout=30) as http:
        sent = await http.post(
            f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **headers}
        )
    assert sent.status_code == 200, sent.text
    return sent


async def _open(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport=VIEWPORT)
    await page.goto(url)
    return page


async def test_a_streamed_answer_reads_as_one_text_with_a_link_to_its_trace(
    browser: Browser,
) -> None:
    settings = Settings(store=StoreSettings(kind="memory"), ui=UiSettings(trace_url=TRACE_URL))
    async with serve_hub(skills=[tokens], settings=settings) as hub:
        traceparent = f"00-{TRACE}-00f067aa0ba902b7-01"
        sent = await _send(hub.url, "go", {"traceparent": traceparent})
        # The trace id stays with the hub: an A2A client is not sent it.
        assert TRACE not in sent.text
        task_id = sent.json()["task"]["id"]
        page = await _open(browser, f"{hub.url}/ui/tasks/{task_id}")
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        # The chunks the skill streamed are one text, as the partner meant it.
        await expect(page.locator(".artifact .text")).to_have_text(WHOLE)
        assert len(CHUNKS) > 1
        link = page.locator("#trace-link")
        await expect(link).to_have_attribute("href", TRACE_URL.replace("{trace_id}", TRACE))
        await page.close()


async def test_a_task_without_a_trace_url_setting_shows_no_trace_link(browser: Browser) -> None:
    async with serve_hub(skills=[tokens]) as hub:
        sent = await _send(hub.url, "go", {"traceparent": f"00-{TRACE}-00f067aa0ba902b7-01"})
        page = await _open(browser, f"{hub.url}/ui/tasks/{sent.json()['task']['id']}")
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await expect(page.locator("#trace-link")).to_have_count(0)
        await page.close()


@asynccontextmanager
async def gated_partner(gate: anyio.Event) -> AsyncIterator[str]:
    """A partner hub whose one skill answers once the test opens `gate`."""

    @skill(id="forecast", description="answers the forecast once allowed")
    async def forecast(ctx: SkillContext) -> str:
        await gate.wait()
        return f"Sunny in {ctx.text}"

    async with serve_hub(skills=[forecast]) as partner:
        yield partner.url


async def test_a_plans_transcript_and_waterfall_fill_in_live(
    browser: Browser, screenshots: Path
) -> None:
    gate = anyio.Event()
    script = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Paris"})], usage=(120, 14)),
        Turn(text="It is sunny in Paris.", chunks=3, usage=(180, 9)),
    ]
    async with serve_model(script) as model, gated_partner(gate) as weather:
        planner = planner_for(model, price={"input": 1.0, "output": 2.0})
        async with serve_hub(skills=[planner], partners={"weather": weather}) as hub:
            sent = await _send(hub.url, "What is the weather in Paris?", {}, skill="planner")
            task_id = sent.json()["task"]["id"]
            page = await _open(browser, f"{hub.url}/ui/tasks/{task_id}")
            await expect(page.locator("#live")).to_have_attribute(
                "data-following", "yes", timeout=WAIT_MS
            )
            # The partner call runs: a bar that grows until now, after the first model step.
            running = page.locator("#timeline tr.bar-row.running")
            await expect(running).to_have_count(1, timeout=WAIT_MS)
            await expect(running).to_have_attribute("data-label", "a2a_weather")
            await expect(page.locator("#transcript li.turn.assistant")).to_have_count(1)
            # The tree of the plan's calls is named for the plan, the call live in it.
            await expect(page.locator("#tree-strategy")).to_have_text("plan", timeout=WAIT_MS)
            await expect(
                page.locator('#delegation li.branch[data-agent="weather"]')
            ).to_have_attribute("data-state", "working", timeout=WAIT_MS)
            # The visitor opens the step's call; live updates keep it open.
            await page.locator("#call-1-0 summary").click()
            await expect(page.locator("#call-1-0 pre")).to_contain_text('"message": "Paris"')
            gate.set()
            await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
            await expect(page.locator("#tree-strategy")).to_have_text("plan", timeout=WAIT_MS)
            # Heard on the page, not read at a reload.
            await expect(page.locator("#status-log")).to_contain_text("completed")
            rows = page.locator("#timeline tr.bar-row")
            await expect(rows).to_have_count(3, timeout=WAIT_MS)
            assert await rows.evaluate_all("rows => rows.map(r => r.dataset.kind)") == [
                "model",
                "partner",
                "model",
            ]
            await expect(page.locator("#timeline tr.bar-row.running")).to_have_count(0)
            bars = page.locator("#timeline svg rect")
            widths = [
                int(w)
                for w in await bars.evaluate_all("rs => rs.map(r => r.getAttribute('width'))")
            ]
            starts = [
                int(x) for x in await bars.evaluate_all("rs => rs.map(r => r.getAttribute('x'))")
            ]
            assert starts == sorted(starts)
            assert all(0 < width <= 1000 for width in widths)
            turns = page.locator("#transcript li.turn")
            await expect(turns).to_have_count(4)
            await expect(turns.nth(0)).to_contain_text("What is the weather in Paris?")
            await expect(turns.nth(1)).to_contain_text("120 in · 14 out")
            await expect(turns.nth(1).locator("details.call")).to_contain_text("a2a_weather")
            await expect(page.locator("#call-1-0")).to_have_attribute("open", "")
            await expect(turns.nth(2)).to_contain_text("Sunny in Paris")
            await expect(turns.nth(2)).to_contain_text("partner weather")
            await expect(turns.nth(3)).to_contain_text("It is sunny in Paris.")
            total = page.locator("#plan-total")
            await expect(total).to_contain_text("2 model step(s), 1 tool call(s)")
            await expect(total).to_contain_text("300 tokens in · 23 out")
            await expect(total).to_contain_text("$0.0003")
            # The answer streamed in chunks reads as one text.
            await expect(page.locator(".artifact .text")).to_have_text("It is sunny in Paris.")
            await page.screenshot(path=screenshots / "task-plan.png", full_page=True)
            # The plan's page, with its waterfall, transcript and tree, passes axe-core.
            await assert_accessible(page)
            await page.close()


async def test_a_scoped_credential_cannot_open_anothers_task_page(browser: Browser) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="alice", api_key=ALICE_KEY),
            CredentialSettings(name="bob", api_key=BOB_KEY),
        ),
    )
    async with console_hub({}, auth=auth) as hub:
        alices = (await _send(hub.url, "from alice", {"X-API-Key": ALICE_KEY})).json()["task"]
        bobs = (await _send(hub.url, "from bob", {"X-API-Key": BOB_KEY})).json()["task"]
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/login")
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", ALICE_KEY)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("alice")
        own = await page.goto(f"{hub.url}/ui/tasks/{alices['id']}")
        assert own is not None
        assert own.status == 200
        await expect(page.locator("#messages")).to_contain_text("caller alice")
        for suffix in ("", "/fragment", "/events"):
            refused = await page.goto(f"{hub.url}/ui/tasks/{bobs['id']}{suffix}")
            assert refused is not None
            assert refused.status == 404, suffix
            assert "from bob" not in await page.content()
        await context.close()
