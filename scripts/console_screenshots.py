"""The console's screenshots in docs/console.md, taken anew: a hub on loopback with real
partners and a little real traffic, each page opened in headless Chromium (Debian's package,
through Playwright) at a fixed small viewport, written as `console-<page>.png`.

The traffic: a partner that answers, one that answers quickly and one slowly, one that is
down (its breaker opens); a delegation, a race swarm (a winner and a canceled branch), a
broadcast, a task waiting for input and a plan by the orchestrator on a scripted model
(`hub.testing.serve_model`): tool call, tool result, a streamed answer.

    make screenshots                                        # every page, into docs/images
    python -m scripts.console_screenshots --pages overview,tasks --out /tmp/shots

Each page is one `Shot` of `PAGES`: its name, its path under the console (with `{race}`,
`{plan}`, ... for the scene's tasks), the colour scheme and whether the whole page is taken.
A new page of the console is one more line there.
"""

from __future__ import annotations

import argparse
import re
import shutil
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
import httpx
from playwright.async_api import Browser, Page, ViewportSize, async_playwright, expect

from hub.client import A2AClient, BreakerConfig, user_message
from hub.config import Settings, StoreSettings
from hub.orchestrator import orchestrator
from hub.protocol import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Task
from hub.registry import AgentEntry
from hub.skills import SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.testing import ScriptedAgent, ToolCall, Turn, answer, serve_hub, serve_model

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
VIEWPORT: ViewportSize = {"width": 1024, "height": 640}
"""Small, so the images docs/console.md shows stay small and readable."""
WAIT_MS = 30_000


@dataclass(frozen=True)
class Shot:
    """One screenshot: the console page at `path` (formatted with the scene's task ids),
    after `act` (when given) has used the page as a visitor would."""

    name: str
    path: str
    scheme: Literal["light", "dark"] = "light"
    full_page: bool = True
    act: Callable[[Page], Awaitable[None]] | None = None


async def converse(page: Page) -> None:
    """A chat with the `greet` skill: it asks a name, the answer is given inline, the
    greeting streams in; the last turn's events open in the inspector."""
    await expect(page.locator("#chat")).to_have_attribute("data-ready", "yes", timeout=WAIT_MS)
    await page.select_option("select[name=target]", "skill:greet")
    for number, text in ((1, "hello"), (2, "Ada")):
        await page.fill("textarea[name=text]", text)
        await page.click("#chat-form button[type=submit]")
        turn = page.locator(f'#chat-log li.turn[data-turn="{number}"]')
        await expect(turn).to_have_attribute("data-done", "yes", timeout=WAIT_MS)
    await page.locator('#inspector-turns > li[data-turn="2"] li.event summary').first.click()


PAGES: tuple[Shot, ...] = (
    Shot("overview", "/"),
    Shot("overview-dark", "/", scheme="dark"),
    Shot("partners", "/partners"),
    Shot("tasks", "/tasks"),
    Shot("task", "/tasks/{plan}"),
    Shot("delegation", "/tasks/{race}", full_page=False),
    Shot("input-required", "/tasks/{asking}"),
    Shot("chat", "/chat", act=converse),
)
"""Every page the script takes, in order."""


@dataclass(frozen=True)
class Scene:
    """The hub the pages show and the ids of the tasks its traffic made."""

    url: str
    tasks: dict[str, str]


@skill(id="greet", description="asks the caller's name, then greets it")
async def greet(ctx: SkillContext) -> str:
    name = await ctx.ask("What is your name?")
    return f"Hello, {name.text()}!"


def _down(port: int) -> AgentEntry:
    """A partner whose card is known but whose address refuses connections."""
    card = AgentCard(
        name="Archive",
        description="the archive partner, down",
        version="1.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="archive", name="archive", description="finds old records", tags=["records"]
            )
        ],
    )
    return AgentEntry(name="archive", card=card, tags=("records",))


@asynccontextmanager
async def scene() -> AsyncIterator[Scene]:
    """A hub with its partners and model, after its traffic; stopped on exit."""
    partners = {
        "weather": ScriptedAgent("weather", reply=answer("Sunny, 21 C in {text}", delay=0.05)),
        "quick": ScriptedAgent("quick", reply=answer("quick: {text}", delay=0.05)),
        "thorough": ScriptedAgent("thorough", reply=answer("thorough: {text}", delay=60)),
    }
    plan = [
        Turn(tool_calls=[ToolCall("a2a_weather", {"message": "Lyon"})]),
        Turn(text="It is sunny in Lyon today, 21 C: a good day for a walk.", chunks=6),
    ]
    async with AsyncExitStack() as stack:
        entries = [
            AgentEntry(name=name, url=await stack.enter_async_context(agent.serve()))
            for name, agent in partners.items()
        ]
        # Bound, never listening: connecting to it is refused.
        refusing = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        refusing.bind(("127.0.0.1", 0))
        entries.append(_down(refusing.getsockname()[1]))
        model = await stack.enter_async_context(serve_model(plan))
        planner = orchestrator(
            id="planner",
            description="plans with the partners",
            model={"provider": "openai", "model": "scripted", "base_url": model.openai_base_url},
            instructions="You plan with the partners.",
            tools={"agents": ["weather"]},
        )
        hub = await stack.enter_async_context(
            serve_hub(
                skills=[echo, greet, delegate, swarm, planner],
                partners=entries,
                settings=Settings(store=StoreSettings(kind="memory"), default_skill="echo"),
                breaker=BreakerConfig(failure_threshold=1),
            )
        )
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=WAIT_MS / 1000))
        client = await A2AClient.from_url(hub.url, http=http)

        async def send(text: str, **metadata: object) -> str:
            task = await client.send(user_message(text), metadata=dict(metadata))
            assert isinstance(task, Task), f"{metadata} answered with a message, not a task"
            return task.id

        tasks = {
            "echo": await send("hello, hub", skill="echo"),
            "delegation": await send("Paris", skill="delegate", agent="weather"),
            "race": await send(
                "who answers first?", skill="swarm", strategy="race", agents=["quick", "thorough"]
            ),
            "broadcast": await send(
                "status?", skill="swarm", strategy="broadcast", agents=["quick", "archive"]
            ),
            "asking": await send("greet me", skill="greet"),
            "plan": await send("What is the weather in Lyon?", skill="planner"),
        }
        yield Scene(url=hub.url, tasks=tasks)


async def settle(page: Page) -> None:
    """Wait until the page's live region (if it has one) follows its stream, or has been
    fetched again once its stream ended: the page as a visitor sees it."""
    region = page.locator("[data-events]")
    if await region.count() == 0:
        return
    following = re.compile(r"^(yes|ended)$")
    await expect(region).to_have_attribute("data-following", following, timeout=WAIT_MS)
    if await region.get_attribute("data-following") == "ended":
        await expect(region).to_have_attribute("data-updated", re.compile("."), timeout=WAIT_MS)


async def take(browser: Browser, shown: Scene, shot: Shot, out: Path) -> Path:
    """The screenshot of one page, written to `out`."""
    context = await browser.new_context(viewport=VIEWPORT, color_scheme=shot.scheme)
    try:
        page = await context.new_page()
        await page.goto(shown.url + "/ui" + shot.path.format(**shown.tasks))
        if shot.act is not None:
            await shot.act(page)
        else:
            await settle(page)
        written = out / f"console-{shot.name}.png"
        await page.screenshot(path=written, full_page=shot.full_page)
        return written
    finally:
        await context.close()


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("the screenshots need Debian's chromium package: run `make chromium`")
    return found


async def screenshots(shots: Sequence[Shot], out: Path) -> list[Path]:
    """Every shot of `shots`, of one scene, written to `out` (a folder that exists)."""
    async with scene() as shown, async_playwright() as playwright:
        # --no-sandbox: as root (CI, containers) Chromium's sandbox refuses to start.
        browser = await playwright.chromium.launch(
            executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            return [await take(browser, shown, shot, out) for shot in shots]
        finally:
            await browser.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    names = ",".join(shot.name for shot in PAGES)
    parser.add_argument("--pages", default=names, help=f"comma-separated, of: {names}")
    parser.add_argument("--out", type=Path, default=IMAGES, help="where the images go")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    by_name = {shot.name: shot for shot in PAGES}
    asked = [name.strip() for name in options.pages.split(",") if name.strip()]
    unknown = [name for name in asked if name not in by_name]
    if unknown:
        print(f"no such page: {', '.join(unknown)} (pages: {', '.join(by_name)})", file=sys.stderr)
        return 2
    options.out.mkdir(parents=True, exist_ok=True)
    written = anyio.run(screenshots, [by_name[name] for name in asked], options.out)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
