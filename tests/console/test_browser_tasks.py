"""The task list in a real browser: real tasks sent through the hub's A2A endpoint (local
skills, a delegation and a swarm to real partners), then searched, filtered and paged from
the page, with relative times and short ids; a scoped credential sees only its own tasks."""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from hub.config import AuthSettings, CredentialSettings
from tests.console.hubs import console_hub

pytestmark = pytest.mark.anyio

WAIT_MS = 15_000
ALICE_KEY = "alice-tasks-key-3f9a1c7e5b"
BOB_KEY = "bob-tasks-key-6d2e8b4a0c"
BULK = 53
"""More than a page (50) of tasks that say "bulk"."""


async def _send_all(url: str, sends: list[tuple[str, dict[str, object]]], key: str = "") -> None:
    """Send each (text, metadata) as a message, a few at a time, and wait for every answer."""
    headers = {"A2A-Version": "1.0", **({"X-API-Key": key} if key else {})}
    limit = asyncio.Semaphore(4)
    async with httpx.AsyncClient(timeout=30) as http:

        async def one(text: str, metadata: dict[str, object]) -> None:
            body = {
                "message": {
                    "messageId": uuid.uuid4().hex,
                    "role": "ROLE_USER",
                    "parts": [{"text": text}],
                },
                "metadata": metadata or None,
            }
            async with limit:
                sent = await http.post(f"{url}/message:send", json=body, headers=headers)
            assert sent.status_code == 200, sent.text

        await asyncio.gather(*(one(text, metadata) for text, metadata in sends))


async def _filter(page: Page, **fields: str) -> None:
    """Fill the filter form and submit it."""
    form = page.locator("#filters")
    for name, value in fields.items():
        field = form.locator(f"[name={name}]")
        if await field.evaluate("node => node.tagName") == "SELECT":
            await field.select_option(value)
        else:
            await field.fill(value)
    async with page.expect_navigation():
        await form.locator("button[type=submit]").click()


async def test_the_task_list_searches_filters_and_pages_real_tasks(browser: Browser) -> None:
    async with console_hub({"billing": 0.0, "search": 0.0}) as hub:
        await _send_all(
            hub.url,
            [
                ("Grüße aus Zürich", {}),
                ("東京タワーの高さ", {}),
                ("pay the invoice", {"skill": "delegate", "agent": "billing"}),
                (
                    "find the invoice everywhere",
                    {"skill": "swarm", "strategy": "broadcast", "agents": ["billing", "search"]},
                ),
            ],
        )
        await _send_all(hub.url, [(f"bulk task {n}", {}) for n in range(BULK)])
        page = await (await browser.new_context(viewport={"width": 1280, "height": 800})).new_page()
        response = await page.goto(f"{hub.url}/ui/tasks")
        assert response is not None
        assert response.status == 200
        rows = page.locator("#task-table tr[data-task]")
        await expect(rows).to_have_count(50)
        await expect(page.locator("#total")).to_have_text(f"{BULK + 4} in all")

        # Short ids, the whole id in the link; relative times with the exact one on hover.
        first = rows.first
        task_id = await first.get_attribute("data-task")
        assert task_id is not None
        assert len(task_id) > 8
        await expect(first.locator("code.task-id")).to_have_text(task_id[:8])
        await expect(first.locator("a").first).to_have_attribute("title", task_id)
        moment = first.locator("time.ago")
        await expect(moment).to_have_text(re.compile(r"^(just now|\d+ s ago)$"))
        await expect(moment).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d .* UTC$"))
        await expect(moment).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT"))
        await expect(first.locator("td.duration")).to_have_text(re.compile(r"^\d"))
        await expect(first.locator("td.skill")).to_have_text("echo")

        # Paging keeps the filters: every "bulk" task once, over two pages.
        await _filter(page, q="BULK task")
        await expect(rows).to_have_count(50)
        await expect(page.locator("#total")).to_have_text(f"{BULK} in all")
        seen = set(await rows.evaluate_all("rows => rows.map(row => row.dataset.task)"))
        await page.click("#next-page")
        await expect(rows).to_have_count(BULK - 50)
        await expect(page.locator("#filters input[name=q]")).to_have_value("BULK task")
        assert "q=BULK+task" in page.url
        more = set(await rows.evaluate_all("rows => rows.map(row => row.dataset.task)"))
        assert not seen & more
        assert len(seen | more) == BULK
        await expect(page.locator("#next-page")).to_have_count(0)
        await page.click("#first-page")
        await expect(rows).to_have_count(50)

        # Text search reads unicode, in any message of the task.
        await page.goto(f"{hub.url}/ui/tasks")
        await _filter(page, q="aus zürich")
        await expect(rows).to_have_count(1)
        await expect(rows.locator("td.snippet")).to_have_text("Grüße aus Zürich")
        await _filter(page, q="京タワー")
        await expect(rows).to_have_count(1)

        # The partner filter follows the ledger: the delegation and the swarm reached billing.
        await page.goto(f"{hub.url}/ui/tasks")
        await _filter(page, partner="billing")
        await expect(rows).to_have_count(2)
        await expect(rows.locator("td.partners")).to_contain_text(["billing", "billing"])
        await _filter(page, partner="search")
        await expect(rows).to_have_count(1)
        # The broadcast starts both at once: the ledger has them in either order.
        await expect(rows.locator("td.partners")).to_have_text(
            re.compile(r"^(billing, search|search, billing)$")
        )
        await expect(rows.locator("td.skill")).to_have_text("swarm")
        await _filter(page, partner="", skill="delegate")
        await expect(rows).to_have_count(1)
        await expect(rows.locator("td.partners")).to_have_text("billing")
        # Filters combine: the search and the state as well as the skill.
        await _filter(page, skill="", q="invoice", state="TASK_STATE_COMPLETED")
        await expect(rows).to_have_count(2)

        # A context link lists that context's tasks.
        await page.goto(f"{hub.url}/ui/tasks")
        context_link = rows.first.locator("td a[href*='context=']")
        async with page.expect_navigation():
            await context_link.click()
        await expect(rows).to_have_count(1)

        # A bad filter value is said plainly, on the page, with the form to fix it.
        response = await page.goto(f"{hub.url}/ui/tasks?q=ab")
        assert response is not None
        assert response.status == 400
        await expect(page.locator("#filter-error")).to_contain_text("at least 3 characters")
        await expect(page.locator("#filters input[name=q]")).to_have_value("ab")
        response = await page.goto(f"{hub.url}/ui/tasks?partner=nowhere")
        assert response is not None
        assert response.status == 400
        await expect(page.locator("#filter-error")).to_contain_text("no partner 'nowhere'")
        response = await page.goto(f"{hub.url}/ui/tasks?page=not-a-token")
        assert response is not None
        assert response.status == 400
        await expect(page.locator("#filter-error")).to_contain_text("pageToken")
        await page.context.close()


async def test_a_scoped_credential_lists_searches_and_filters_only_its_own_tasks(
    browser: Browser,
) -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="alice", api_key=ALICE_KEY, agents=("billing",)),
            CredentialSettings(name="bob", api_key=BOB_KEY),
        ),
    )
    async with console_hub({"billing": 0.0, "search": 0.0}, auth=auth) as hub:
        await _send_all(
            hub.url,
            [
                ("alice asks about the invoice", {}),
                ("alice pays the invoice", {"skill": "delegate", "agent": "billing"}),
            ],
            key=ALICE_KEY,
        )
        await _send_all(
            hub.url,
            [
                ("bob asks about the invoice", {}),
                ("bob pays the invoice", {"skill": "delegate", "agent": "billing"}),
                ("bob searches", {"skill": "delegate", "agent": "search"}),
            ],
            key=BOB_KEY,
        )
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        page = await context.new_page()
        await page.goto(f"{hub.url}/ui/login")
        await page.select_option("select[name=kind]", "api_key")
        await page.fill("input[name=secret]", ALICE_KEY)
        await page.click("#login button[type=submit]")
        await expect(page.locator("#visitor")).to_have_text("alice")

        await page.goto(f"{hub.url}/ui/tasks")
        rows = page.locator("#task-table tr[data-task]")
        await expect(rows).to_have_count(2)
        await expect(page.locator("#total")).to_have_text("2 in all")
        await expect(rows.locator("td.caller")).to_have_text(["alice", "alice"])
        # Only what alice may see is offered: herself as caller, billing as partner.
        callers = page.locator("#filters select[name=caller] option")
        await expect(callers).to_have_text(["any", "alice"])
        partners = page.locator("#filters select[name=partner] option")
        await expect(partners).to_have_text(["any", "billing"])

        alices = set(await rows.evaluate_all("rows => rows.map(row => row.dataset.task)"))

        # bob's tasks say "the invoice" too, and reached billing too: not listed for alice.
        await _filter(page, q="the invoice")
        await expect(rows).to_have_count(2)
        assert set(await rows.evaluate_all("rows => rows.map(r => r.dataset.task)")) == alices
        await _filter(page, q="", partner="billing")
        await expect(rows).to_have_count(1)
        await expect(rows.locator("td.partners")).to_have_text("billing")
        await expect(rows.locator("td.skill")).to_have_text("delegate")
        await _filter(page, partner="", caller="alice")
        await expect(rows).to_have_count(2)

        # Bob's tasks stay out of reach however the filters are written.
        for query, said in [
            ("caller=bob", "only your own tasks"),
            ("partner=search", "no partner 'search'"),
        ]:
            response = await page.goto(f"{hub.url}/ui/tasks?{query}")
            assert response is not None
            assert response.status == 400
            await expect(page.locator("#filter-error")).to_contain_text(said)
            await expect(rows).to_have_count(0)
        await page.goto(f"{hub.url}/ui/tasks?q=bob")
        await expect(rows).to_have_count(0)
        assert ALICE_KEY not in await page.content()
        await context.close()
