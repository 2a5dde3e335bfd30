"""The chat in a real browser (Debian's Chromium, driven by Playwright) against a hub served
on loopback with real partners: a conversation that answers a question inline, streamed
answers joined, the event inspector, a partner through the gateway, attachments that reach
the skill, a scoped credential's targets, the form without the script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, ConsoleMessage, Locator, Page, ViewportSize, expect

from hub.config import AuthSettings, CredentialSettings, LimitSettings
from tests.console.accessibility import assert_accessible
from tests.console.chat_hub import chat_hub
from tests.console.hubs import HOSTILE

pytestmark = pytest.mark.anyio

WAIT_MS = 20_000
VIEWPORT: ViewportSize = {"width": 1200, "height": 800}
SCOPED = "chat-browser-key-9e3b1c7a5d"
CLOCK = re.compile(r"^\d\d:\d\d:\d\d\.\d\d\d$")
"""How the inspector shows when an event came (UTC, to the millisecond)."""


async def open_chat(page: Page, url: str) -> None:
    await page.goto(f"{url}/ui/chat")
    await expect(page.locator("#chat")).to_have_attribute("data-ready", "yes")


def turn(page: Page, number: int) -> Locator:
    return page.locator(f'#chat-log li.turn[data-turn="{number}"]')


async def say(page: Page, text: str, *, number: int, target: str | None = None) -> Locator:
    """Send `text` (to `target` when given) and wait for the turn's stream to end."""
    if target is not None:
        await page.select_option("select[name=target]", target)
    await page.fill("textarea[name=text]", text)
    await page.click("#chat-form button[type=submit]")
    sent = turn(page, number)
    await expect(sent).to_have_attribute("data-done", "yes", timeout=WAIT_MS)
    return sent


async def event_kinds(page: Page, number: int) -> list[str]:
    items = page.locator(f'#inspector-turns > li[data-turn="{number}"] li.event')
    return [await item.get_attribute("data-kind") or "" for item in await items.all()]


async def test_a_conversation_answers_a_question_inline_and_shows_its_events(
    browser: Browser, screenshots: Path
) -> None:
    async with chat_hub() as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await open_chat(page, hub.url)
        chat = page.locator("#chat")

        first = await say(page, "hi", number=1, target="skill:interview")
        await expect(first).to_have_attribute("data-state", "input-required")
        await expect(first.locator(".bubble.question")).to_have_text("What is your name?")
        context = await chat.get_attribute("data-context")
        waiting = await chat.get_attribute("data-task")
        assert context
        assert waiting
        await expect(page.locator("#chat-waiting")).to_be_visible()
        await expect(first.locator("a.task-link")).to_have_attribute("href", f"/ui/tasks/{waiting}")

        # The answer goes into the waiting task; the greeting streams in four chunks,
        # shown as one text.
        second = await say(page, "Ada", number=2)
        await expect(second).to_have_attribute("data-state", "completed")
        answer = second.locator(".bubble.agent[data-artifact]")
        await expect(answer.locator(".text")).to_have_count(1)
        await expect(answer).to_have_text("Hello, Ada! Nice to meet you.")
        await expect(second.locator("a.task-link")).to_have_attribute(
            "href", f"/ui/tasks/{waiting}"
        )
        await expect(chat).to_have_attribute("data-task", "")
        await expect(page.locator("#chat-waiting")).to_be_hidden()
        assert await chat.get_attribute("data-context") == context

        # The inspector: the second turn's events in order, with their kinds.
        kinds = await event_kinds(page, 2)
        assert kinds[0] == "task"
        assert kinds.count("artifactUpdate") == 4
        assert kinds[-1] == "statusUpdate"
        assert set(kinds) == {"task", "statusUpdate", "artifactUpdate"}
        # The first turn's events folded away when the second began; each event unfolds.
        inspector = page.locator("#inspector-turns")
        folded = inspector.locator('li[data-turn="1"] > details')
        await expect(folded).not_to_have_attribute("open", "")
        chunks = inspector.locator('li[data-turn="2"] li.event[data-kind="artifactUpdate"]')
        chunk = chunks.last
        await chunk.locator("summary").click()
        await expect(chunk.locator("pre")).to_be_visible()
        assert '"append": true' in await chunk.locator("pre").inner_text()
        await expect(chunk.locator("time")).to_have_text(CLOCK)

        # A new message in the same context: a new task there.
        third = await say(page, "hi again", number=3)
        await expect(third).to_have_attribute("data-state", "input-required")
        assert await chat.get_attribute("data-context") == context
        assert hub.received.contexts == [context, context]
        question = inspector.locator('li[data-turn="3"] li.event').last
        await question.locator("summary").click()
        await expect(question.locator("pre")).to_contain_text("TASK_STATE_INPUT_REQUIRED")
        await page.screenshot(path=screenshots / "chat.png", full_page=True)
        # The chat with its bubbles and an opened event passes axe-core.
        await assert_accessible(page)

        # A new conversation: an empty chat, and the next message in a new context.
        await page.click("#new-conversation")
        await expect(page.locator("#chat-log li.turn")).to_have_count(0)
        await expect(page.locator("#inspector-turns > li")).to_have_count(0)
        await expect(chat).to_have_attribute("data-context", "")
        await say(page, "hello", number=1)
        fresh = await chat.get_attribute("data-context")
        assert fresh
        assert fresh != context
        await page.close()


async def test_a_partner_is_reached_through_the_gateway_and_asks_inline(
    browser: Browser,
) -> None:
    async with chat_hub() as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await open_chat(page, hub.url)
        first = await say(page, "hello", number=1, target="agent:pong")
        await expect(first).to_have_attribute("data-state", "completed")
        await expect(first.locator(".bubble.agent")).to_have_text("answer from pong")
        link = await first.locator("a.task-link").get_attribute("href")
        assert link is not None
        assert link.startswith("/ui/agents/pong/tasks/")
        assert "artifactUpdate" in await event_kinds(page, 1)

        asked = await say(page, "weather?", number=2)
        await expect(asked.locator(".bubble.question")).to_have_text("Which city?")
        answered = await say(page, "Lyon", number=3)
        await expect(answered).to_have_attribute("data-state", "completed")
        await expect(answered.locator(".bubble.agent")).to_have_text("Sunny in Lyon")
        # The partner's task page, through the gateway, from the turn's link.
        await answered.locator("a.task-link").click()
        await page.wait_for_url("**/ui/agents/pong/tasks/*")
        await expect(page.locator("#task-state")).to_have_text("completed")

        # A partner that does not stream: its answer is in the one task event.
        await open_chat(page, hub.url)
        whole = await say(page, "hello", number=1, target="agent:quiet")
        await expect(whole).to_have_attribute("data-state", "completed")
        await expect(whole.locator(".bubble.agent")).to_have_text("quietly: hello")
        assert await event_kinds(page, 1) == ["task"]
        await page.close()


async def test_metadata_a_data_part_and_a_file_reach_the_skill(browser: Browser) -> None:
    limits = LimitSettings(max_body=64 * 1024)
    async with chat_hub(limits=limits) as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        await open_chat(page, hub.url)
        await page.select_option("select[name=target]", "skill:inspect")
        await page.click("#chat-attach summary")

        # Bad JSON: refused with the reason, and what was typed is kept to be fixed.
        await page.fill("textarea[name=metadata]", '{"ticket": 42')
        refused = await say(page, "look", number=1)
        await expect(refused.locator(".bubble.error")).to_contain_text(
            "the metadata is not valid JSON"
        )
        await expect(page.locator("textarea[name=text]")).to_have_value("look")

        # Too large: refused on the page before anything is sent.
        big = {"name": "big.bin", "mimeType": "application/octet-stream", "buffer": b"x" * 70_000}
        await page.set_input_files("input[name=files]", files=[big])
        await page.click("#chat-form button[type=submit]")
        await expect(page.locator("#chat-error")).to_contain_text("limits.max_body")
        await expect(page.locator("#chat-log li.turn")).to_have_count(1)

        await page.fill("textarea[name=metadata]", '{"ticket": 42}')
        await page.fill("textarea[name=data]", '{"rows": [1, 2, 3]}')
        notes = {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"first file"}
        await page.set_input_files("input[name=files]", files=[notes])
        sent = await say(page, "look", number=2)
        await expect(page.locator("#chat-error")).to_be_hidden()
        await expect(sent).to_have_attribute("data-state", "completed")
        await expect(sent.locator(".bubble.user .attached")).to_have_text(
            "attached: metadata, data part, file notes.txt"
        )
        await expect(sent.locator(".bubble.agent")).to_have_text("got 3 parts")
        await page.close()
    assert hub.received.metadata == [{"ticket": 42, "skill": "inspect"}]
    assert hub.received.data == [[{"rows": [1, 2, 3]}]]
    assert hub.received.files == [("notes.txt", "text/plain", b"first file")]


async def test_event_text_shows_as_text_and_runs_no_script(browser: Browser) -> None:
    async with chat_hub() as hub:
        page = await browser.new_page(viewport=VIEWPORT)
        said: list[ConsoleMessage] = []
        page.on("console", lambda message: said.append(message))
        await open_chat(page, hub.url)
        sent = await say(page, HOSTILE, number=1, target="skill:echo")
        await expect(sent.locator(".bubble.agent")).to_have_text(HOSTILE)
        await expect(sent.locator(".bubble.user")).to_have_text(HOSTILE)
        assert await page.locator("#chat script, #chat img, #inspector img").count() == 0
        shown = await page.locator("#inspector pre.event-json").all_text_contents()
        assert HOSTILE.replace('"', '\\"') in "".join(shown)
        assert await page.evaluate("typeof window.__pwned") == "undefined"
        assert [message.text for message in said if "pwned" in message.text] == []
        await page.close()


async def test_a_scoped_credential_sees_and_reaches_only_its_targets(browser: Browser) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(
                name="scoped", api_key=SCOPED, skills=("interview",), agents=("pong",)
            ),
        ),
    )
    async with chat_hub(auth=auth) as hub:
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/chat")
        await page.wait_for_url("**/ui/login")
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", SCOPED)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("scoped")
        await open_chat(page, hub.url)
        options = page.locator("select[name=target] option")
        assert [await option.get_attribute("value") for option in await options.all()] == [
            "skill:interview",
            "agent:pong",
        ]
        sent = await say(page, "hello", number=1, target="agent:pong")
        await expect(sent.locator(".bubble.agent")).to_have_text("answer from pong")
        # Signed out in another tab: the next turn is not sent, and the chat says why.
        other = await context.new_page()
        await other.goto(f"{hub.url}/ui/")
        await other.click(".who button[type=submit]")
        await other.wait_for_url("**/ui/login")
        after = await say(page, "again", number=2)
        await expect(after.locator(".bubble.error")).to_have_text(
            "refused: the session has ended; reload the page"
        )
        await context.close()


async def test_without_the_script_the_form_sends_and_lands_on_the_task_page(
    browser: Browser,
) -> None:
    async with chat_hub() as hub:
        context = await browser.new_context(viewport=VIEWPORT, java_script_enabled=False)
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/chat")
        await page.select_option("select[name=target]", "skill:interview")
        await page.fill("textarea[name=text]", "hi")
        await page.click("#chat-form button[type=submit]")
        await page.wait_for_url("**/ui/tasks/*")
        said = page.locator("#messages li.message.user")
        await expect(said.locator(".role")).to_contain_text("caller")
        await expect(said.locator(".text")).to_have_text("hi")
        await context.close()
