"""A task page's delegation tree while the work runs, in a real browser: partner hubs on
loopback whose skills wait on events the test releases, so each branch changes when the test
says, and the page must show it without the hub task itself changing."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx
import pytest
from playwright.async_api import Browser, Locator, Page, expect

from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings
from hub.registry import AgentEntry
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.testing import serve_hub

pytestmark = pytest.mark.anyio

WAIT_MS = 20_000
ALICE_KEY = "alice-tree-key-3f9a1c7e5b"
BOB_KEY = "bob-tree-key-8d2e6b4a1f"


@dataclass
class Pace:
    """The events that let each partner go on."""

    streamer: anyio.Event = field(default_factory=anyio.Event)
    failer: anyio.Event = field(default_factory=anyio.Event)
    steady: anyio.Event = field(default_factory=anyio.Event)


def _partner_skills(pace: Pace) -> dict[str, LocalSkill]:
    @skill(id="stream", description="streams a first chunk, the rest when released")
    async def streamer(ctx: SkillContext) -> None:
        await ctx.progress("reading the request")
        chunk = await ctx.artifact("first part, ", name="answer", last_chunk=False)
        await pace.streamer.wait()
        await ctx.artifact("second part", artifact_id=chunk, append=True, last_chunk=True)

    @skill(id="fail", description="fails when released")
    async def failer(ctx: SkillContext) -> str:
        await ctx.progress("checking the disk")
        await pace.failer.wait()
        raise ctx.fail("the disk is full")

    @skill(id="steady", description="answers when released")
    async def steady(ctx: SkillContext) -> str:
        await ctx.progress("thinking")
        await pace.steady.wait()
        return "steady answer"

    return {"streamer": streamer, "failer": failer, "steady": steady}


@dataclass
class TreeHub:
    url: str
    pace: Pace


@asynccontextmanager
async def tree_hub(auth: AuthSettings | None = None) -> AsyncIterator[TreeHub]:
    """A hub with the `swarm` and `delegate` skills and three paced partner hubs."""
    pace = Pace()
    async with AsyncExitStack() as stack:
        entries = []
        for name, partner_skill in _partner_skills(pace).items():
            partner = await stack.enter_async_context(serve_hub(skills=[partner_skill]))
            entries.append(AgentEntry(name=name, url=partner.url))
        settings = Settings(
            store=StoreSettings(kind="memory"), default_skill="echo", auth=auth or AuthSettings()
        )
        hub = await stack.enter_async_context(
            serve_hub(skills=[echo, swarm, delegate], partners=entries, settings=settings)
        )
        yield TreeHub(url=hub.url, pace=pace)


async def _start(url: str, text: str, headers: dict[str, str], **metadata: object) -> str:
    """Send without waiting for the answer; the task's id."""
    body = {
        "message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"returnImmediately": True},
        "metadata": metadata,
    }
    async with httpx.AsyncClient(timeout=20) as http:
        sent = await http.post(
            f"{url}/message:send", json=body, headers={"A2A-Version": "1.0", **headers}
        )
    assert sent.status_code == 200, sent.text
    task_id: str = sent.json()["task"]["id"]
    return task_id


def _branch(page: Page, agent: str) -> Locator:
    return page.locator(f'#delegation li.branch[data-agent="{agent}"]')


async def test_a_running_swarm_tree_changes_branch_by_branch(browser: Browser) -> None:
    async with tree_hub() as hub:
        task_id = await _start(
            hub.url,
            "check everything",
            {},
            skill="swarm",
            strategy="broadcast",
            agents=["streamer", "failer", "steady"],
        )
        page = await browser.new_page()
        await page.goto(f"{hub.url}/ui/tasks/{task_id}")
        # While it runs: the heading names the strategy, the streaming branch is working
        # and shows its first chunk, nothing has failed yet.
        await expect(page.locator("#tree-strategy")).to_have_text("broadcast", timeout=WAIT_MS)
        streaming = _branch(page, "streamer")
        await expect(streaming).to_have_attribute("data-state", "working", timeout=WAIT_MS)
        await expect(streaming.locator(".progress")).to_contain_text("1 chunk", timeout=WAIT_MS)
        await expect(streaming).to_contain_text("first part")
        for name in ("failer", "steady"):
            await expect(_branch(page, name)).to_have_attribute(
                "data-state", "working", timeout=WAIT_MS
            )
        await expect(page.locator("body")).to_have_attribute("data-tree-following", "yes")
        # One branch fails: the page says so, with its error, while the others still run.
        hub.pace.failer.set()
        failing = _branch(page, "failer")
        await expect(failing).to_have_attribute("data-state", "failed", timeout=WAIT_MS)
        await expect(failing.locator(".problem")).to_contain_text("the disk is full")
        await expect(streaming).to_have_attribute("data-state", "working")
        await expect(_branch(page, "steady")).to_have_attribute("data-state", "working")
        await expect(page.locator("#task-state")).to_have_text("working")
        # The others finish: the final tree, from the swarm's result.
        hub.pace.streamer.set()
        await expect(streaming).to_have_attribute("data-state", "completed", timeout=WAIT_MS)
        hub.pace.steady.set()
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await expect(page.locator("#tree")).to_have_attribute("data-tree-final", "yes")
        await expect(page.locator("body")).to_have_attribute(
            "data-tree-following", "ended", timeout=WAIT_MS
        )
        await expect(page.locator("#delegation")).to_contain_text("2 of 3 partners completed")
        await expect(streaming).to_contain_text("first part, second part")
        await expect(_branch(page, "steady")).to_contain_text("steady answer")
        await expect(failing.locator(".problem")).to_contain_text("the disk is full")
        await page.close()


async def test_a_running_delegate_tree_shows_its_branch_working_then_completed(
    browser: Browser,
) -> None:
    async with tree_hub() as hub:
        task_id = await _start(hub.url, "read this", {}, skill="delegate", agent="streamer")
        page = await browser.new_page()
        await page.goto(f"{hub.url}/ui/tasks/{task_id}")
        await expect(page.locator("#tree-strategy")).to_have_text("delegate", timeout=WAIT_MS)
        streaming = _branch(page, "streamer")
        await expect(streaming).to_have_attribute("data-state", "working", timeout=WAIT_MS)
        await expect(streaming.locator(".progress")).to_contain_text("1 chunk", timeout=WAIT_MS)
        await expect(streaming.locator(".seconds")).to_have_count(1)
        task_link = streaming.locator("a code")
        await expect(task_link).not_to_have_text("")
        hub.pace.streamer.set()
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await expect(streaming).to_have_attribute("data-state", "completed", timeout=WAIT_MS)
        await expect(streaming).to_contain_text("first part, second part")
        await page.close()


async def test_a_delegate_branch_that_fails_shows_its_error_before_the_task_ends(
    browser: Browser,
) -> None:
    async with tree_hub() as hub:
        task_id = await _start(hub.url, "check it", {}, skill="delegate", agent="failer")
        page = await browser.new_page()
        await page.goto(f"{hub.url}/ui/tasks/{task_id}")
        failing = _branch(page, "failer")
        await expect(failing).to_have_attribute("data-state", "working", timeout=WAIT_MS)
        await expect(failing.locator(".said")).to_have_text("checking the disk")
        hub.pace.failer.set()
        await expect(page.locator("#task-state")).to_have_text("failed", timeout=WAIT_MS)
        await expect(failing).to_have_attribute("data-state", "failed", timeout=WAIT_MS)
        await page.close()


async def test_with_auth_on_a_credential_cannot_see_anothers_tree(browser: Browser) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="alice", api_key=ALICE_KEY),
            CredentialSettings(name="bob", api_key=BOB_KEY),
        ),
    )
    async with tree_hub(auth=auth) as hub:
        bobs = await _start(
            hub.url, "bob's work", {"X-API-Key": BOB_KEY}, skill="delegate", agent="steady"
        )
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/login")
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", ALICE_KEY)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("alice")
        for suffix in ("", "/tree", "/tree/events"):
            refused = await page.request.get(f"{hub.url}/ui/tasks/{bobs}{suffix}")
            assert refused.status == 404, suffix
            assert "steady" not in await refused.text()
        # Bob sees his own, running.
        await page.click("form.who button[type=submit]")
        await page.goto(f"{hub.url}/ui/login")
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", BOB_KEY)
        await page.click("#login button[type=submit]")
        await page.goto(f"{hub.url}/ui/tasks/{bobs}")
        await expect(_branch(page, "steady")).to_have_attribute(
            "data-state", "working", timeout=WAIT_MS
        )
        hub.pace.steady.set()
        await expect(page.locator("#task-state")).to_have_text("completed", timeout=WAIT_MS)
        await context.close()
