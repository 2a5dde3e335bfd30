"""The console in a real browser: headless Chromium from Debian's package, driven by
Playwright, against a hub served on loopback with real partners."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, ViewportSize, expect

from hub.config import AuthSettings, CredentialSettings
from tests.console.hubs import HOSTILE, console_hub

pytestmark = pytest.mark.anyio

WAIT_MS = 15_000
VIEWPORT: ViewportSize = {"width": 1024, "height": 640}
"""Small, so the screenshots docs/console.md shows stay small."""
ALICE_KEY = "alice-console-key-5e2b7d9c1a"
BOB_TOKEN = "bob-console-token-8c4f1a6e3d"


async def _send(url: str, text: str, headers: dict[str, str], **metadata: object) -> dict:
    body = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        "metadata": metadata or None,
    }
    async with httpx.AsyncClient(timeout=20) as http:
        sent = await http.post(
            f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **headers}
        )
    assert sent.status_code == 200, sent.text
    task: dict = sent.json()["task"]
    return task


async def _try(page: Page, url: str, target: str, text: str, **fields: str) -> None:
    """Send from the chat and go to the task's page from the link its turn shows."""
    await page.goto(f"{url}/ui/chat")
    await expect(page.locator("#chat")).to_have_attribute("data-ready", "yes")
    await page.select_option("select[name=target]", target)
    await page.fill("textarea[name=text]", text)
    for name, value in fields.items():
        if name == "strategy":
            await page.select_option("select[name=strategy]", value)
        else:
            await page.fill(f"input[name={name}]", value)
    await page.click("#chat-form button[type=submit]")
    link = page.locator('#chat-log li.turn[data-turn="1"] a.task-link')
    await expect(link).to_have_attribute("href", re.compile(r"^/ui/tasks/"), timeout=WAIT_MS)
    # The log grows as the task's events stream in and can move the link between the moment
    # a pointer click aims and the moment it lands: the click is sent to the link itself.
    async with page.expect_navigation(url="**/ui/tasks/*", timeout=WAIT_MS):
        await link.dispatch_event("click")


async def test_partner_list_shows_two_live_partners_and_a_down_one_with_its_breaker(
    browser: Browser, refusing_port: int, screenshots: Path
) -> None:
    async with console_hub({"fast": 0.0, "steady": 0.02}, down_port=refusing_port) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await page.goto(f"{hub.url}/ui/partners")
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")
        # One broadcast reaches all three; the down partner's breaker opens (threshold 1),
        # and the open page hears of it.
        await _send(
            hub.url,
            "hello",
            {},
            skill="swarm",
            strategy="broadcast",
            agents=["fast", "steady", "down"],
        )
        down = page.locator('[data-partner="down"]')
        await expect(down.locator(".breaker")).to_have_attribute(
            "data-breaker", "open", timeout=WAIT_MS
        )
        await expect(down.locator(".badge")).to_have_text("down")
        for name in ("fast", "steady"):
            row = page.locator(f'[data-partner="{name}"]')
            await expect(row.locator(".badge")).to_have_text("up")
            await expect(row.locator(".breaker")).to_have_attribute("data-breaker", "closed")
            await expect(row).to_contain_text("p50")
        await page.screenshot(path=screenshots / "partners.png", full_page=True)
        await page.goto(f"{hub.url}/ui/")
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")
        await page.screenshot(path=screenshots / "overview.png", full_page=True)
        await page.close()


async def test_a_task_sent_from_the_page_streams_to_completed(
    browser: Browser, screenshots: Path
) -> None:
    async with console_hub({}) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await _try(page, hub.url, "skill:slow", "streamed")
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")
        await expect(page.locator("#task-state")).to_have_text("working")
        hub.gates.release.set()  # the skill goes on only once the page follows the task
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await expect(page.locator(".artifact")).to_contain_text("done: streamed")
        log = await page.locator("#status-log li").all_inner_texts()
        states = [line.split(" ")[0] for line in log]
        assert states[0] == "working"
        assert states[-1] == "completed"
        await page.screenshot(path=screenshots / "task.png", full_page=True)
        await page.close()


async def test_an_input_required_task_is_answered_from_the_page(browser: Browser) -> None:
    async with console_hub({}) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await _try(page, hub.url, "skill:ask", "greet me")
        await expect(page.locator("#task-state")).to_have_text("input-required", timeout=WAIT_MS)
        await expect(page.locator("#status-text")).to_have_text("What is your name?")
        await page.fill("#answer input[name=text]", "Ada")
        await page.click("#answer button[type=submit]")
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await expect(page.locator(".artifact")).to_contain_text("hello Ada")
        await page.close()


async def test_a_race_swarm_shows_its_winner_and_its_canceled_branches(
    browser: Browser, screenshots: Path
) -> None:
    async with console_hub({"quick": 0.05, "slow-a": 30.0, "slow-b": 30.0}) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await _try(
            page,
            hub.url,
            "skill:swarm",
            "who is first?",
            strategy="race",
            agents="quick, slow-a, slow-b",
        )
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        winner = page.locator('#delegation li.branch[data-agent="quick"]')
        await expect(winner).to_contain_text("winner")
        await expect(winner).to_contain_text("answer from quick")
        for name in ("slow-a", "slow-b"):
            branch = page.locator(f'#delegation li.branch[data-agent="{name}"]')
            await expect(branch).to_have_attribute("data-state", "canceled")
            await expect(branch).not_to_contain_text("winner")
        await page.screenshot(path=screenshots / "delegation.png")
        await page.close()


async def test_a_hostile_card_renders_as_text_and_runs_no_script(
    browser: Browser, screenshots: Path
) -> None:
    async with console_hub({}, hostile=True) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        said: list[ConsoleMessage] = []
        page.on("console", lambda message: said.append(message))
        await page.goto(f"{hub.url}/ui/partners")
        row = page.locator('[data-partner="hostile"]')
        await row.locator("summary").click()
        # Every field shows the payload as text: name, description, version, provider,
        # interface URL, skill id, name, description, tags and examples.
        shown = await row.inner_text()
        assert shown.count("<script>window.__pwned") >= 9
        assert await page.locator('[data-partner="hostile"] script').count() == 0
        assert await page.locator('[data-partner="hostile"] img').count() == 0
        # A message holding the payload is text on the task page too.
        await _try(page, hub.url, "skill:echo", HOSTILE)
        await expect(page.locator(".artifact .text")).to_have_text(HOSTILE)
        await page.goto(f"{hub.url}/ui/partners")
        await expect(page.locator("#live")).to_have_attribute("data-following", "yes")
        assert await page.evaluate("typeof window.__pwned") == "undefined"
        assert [message.text for message in said if "pwned" in message.text] == []
        await page.screenshot(path=screenshots / "hostile-card.png", full_page=True)
        await page.close()


async def test_with_auth_on_a_credential_sees_only_its_own_tasks(
    browser: Browser, screenshots: Path
) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="alice", api_key=ALICE_KEY),
            CredentialSettings(name="bob", bearer=BOB_TOKEN),
        ),
    )
    async with console_hub({}, auth=auth) as hub:
        alices = await _send(hub.url, "from alice", {"X-API-Key": ALICE_KEY})
        bobs = await _send(hub.url, "from bob", {"Authorization": f"Bearer {BOB_TOKEN}"})
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/tasks")
        await page.wait_for_url("**/ui/login")
        await page.fill("input[name=secret]", "not-a-valid-key-at-all")
        await page.click("#login button[type=submit]")
        await expect(page.locator("#refused")).to_be_visible()
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", ALICE_KEY)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("alice")
        await page.goto(f"{hub.url}/ui/tasks")
        rows = page.locator("#task-table tr[data-task]")
        await expect(rows).to_have_count(1)
        await expect(rows).to_have_attribute("data-task", alices["id"])
        await page.screenshot(path=screenshots / "tasks.png", full_page=True)
        # Bob's task is not found for alice, as through the A2A endpoints.
        refused = await page.goto(f"{hub.url}/ui/tasks/{bobs['id']}")
        assert refused is not None
        assert refused.status == 404
        assert ALICE_KEY not in await page.content()
        await context.close()
