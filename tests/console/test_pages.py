"""The console's pages in process (no browser): its security headers, CSRF refusals, the
settings that switch and move it, downloads and paging."""

from __future__ import annotations

import base64
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager
from pydantic import ValidationError

from hub.app import create_app
from hub.config import (
    AuthSettings,
    CredentialSettings,
    MetricsSettings,
    Settings,
    StoreSettings,
    TelemetrySettings,
    UiSettings,
)
from hub.console import CONTENT_SECURITY_POLICY
from hub.console.partner_board import shown_url
from hub.partners import Partners
from hub.protocol import Part
from hub.registry import AgentEntry, Registry
from hub.skills import LocalSkill, SkillContext, skill
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.console.hubs import inline_partner
from tests.swarm.partners import scripted

pytestmark = pytest.mark.anyio

KEY = "console-page-key-3f9a7c2e1b"
FILE = b"\x00\x01binary <script>alert(1)</script>"


@skill(id="report", description="answers with a file")
async def report(ctx: SkillContext) -> list[Part]:
    raw = base64.b64encode(FILE).decode()
    return [Part(raw=raw, filename="report <1>.html", media_type="text/html")]


@asynccontextmanager
async def console(
    settings: Settings | None = None,
    *,
    partners: Registry | None = None,
    skills: Mapping[str, LocalSkill] | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    settings = settings or Settings(store=StoreSettings(kind="memory"))
    app = create_app(
        settings,
        store=MemoryTaskStore(),
        skills={"echo": echo, "report": report, **(skills or {})},
        partners=Partners(partners or Registry()),
    )
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://hub") as client,
    ):
        yield client


def token(html: str) -> str:
    found = re.search(r'name="_csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


async def test_console_pages_carry_a_policy_that_allows_no_inline_script() -> None:
    async with console() as client:
        answer = await client.get("/ui/")
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self';" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert answer.headers["x-frame-options"] == "DENY"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()


async def test_a_post_without_the_session_token_is_refused_and_sends_nothing() -> None:
    async with console() as client:
        await client.get("/ui/chat")
        refused = await client.post("/ui/chat", data={"target": "skill:echo", "text": "hi"})
        forged = await client.post(
            "/ui/chat", data={"_csrf": "guessed", "target": "skill:echo", "text": "hi"}
        )
        listed = await client.get("/tasks", headers={"A2A-Version": "1.0"})
    assert refused.status_code == 403
    assert forged.status_code == 403
    assert listed.json()["tasks"] == []


async def test_a_post_from_another_origin_is_refused_even_with_the_token() -> None:
    async with console() as client:
        page = await client.get("/ui/chat")
        refused = await client.post(
            "/ui/chat",
            data={"_csrf": token(page.text), "target": "skill:echo", "text": "hi"},
            headers={"Origin": "http://elsewhere.example"},
        )
        sent = await client.post(
            "/ui/chat",
            data={"_csrf": token(page.text), "target": "skill:echo", "text": "hi"},
            headers={"Origin": "http://hub"},
        )
    assert refused.status_code == 403
    assert sent.status_code == 303


async def test_the_console_can_be_switched_off_or_served_elsewhere() -> None:
    off = Settings(store=StoreSettings(kind="memory"), ui=UiSettings(enabled=False))
    async with console(off) as client:
        assert (await client.get("/ui/")).status_code == 404
    moved = Settings(store=StoreSettings(kind="memory"), ui=UiSettings(path="/console"))
    async with console(moved) as client:
        assert (await client.get("/console/")).status_code == 200
        assert (await client.get("/ui/")).status_code == 404
        script = await client.get("/console/static/console.js")
        assert script.status_code == 200


async def test_the_overview_shows_the_request_rate_and_error_rate_the_metrics_measure() -> None:
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    missing = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "no-such-task"}}
    async with console() as client:
        for body in (send, send, send, missing):
            await client.post("/", json=body, headers={"A2A-Version": "1.0"})
        page = await client.get("/ui/")
    rate = re.search(r'id="requests-per-second">([0-9.]+)<', page.text)
    errors = re.search(r'id="error-rate">([0-9.]+) %<', page.text)
    assert rate is not None
    assert float(rate.group(1)) > 0
    assert errors is not None
    assert float(errors.group(1)) == 25.0


async def test_with_metrics_off_the_overview_says_the_traffic_is_not_measured() -> None:
    off = Settings(
        store=StoreSettings(kind="memory"),
        telemetry=TelemetrySettings(metrics=MetricsSettings(enabled=False)),
    )
    async with console(off) as client:
        page = await client.get("/ui/")
    assert "not measured: metrics are off" in page.text


@pytest.mark.parametrize("path", ["/", "/tasks", "/agents/x", "ui", "/ui/", "/a b"])
def test_a_console_path_that_is_not_its_own_is_a_settings_error(path: str) -> None:
    with pytest.raises(ValidationError, match=r"ui\.path"):
        UiSettings(path=path)


async def test_a_file_part_downloads_as_an_attachment_never_as_a_page() -> None:
    async with console() as client:
        page = await client.get("/ui/chat")
        sent = await client.post(
            "/ui/chat", data={"_csrf": token(page.text), "target": "skill:report", "text": "go"}
        )
        task_page = await client.get(sent.headers["location"])
        link = re.search(r'href="([^"]+/files/artifacts/0/0)"', task_page.text)
        assert link is not None
        download = await client.get(link.group(1))
    assert download.status_code == 200
    assert download.content == FILE
    assert download.headers["content-type"] == "application/octet-stream"
    assert download.headers["content-disposition"].startswith("attachment;")


async def test_the_task_list_pages_through_the_store_newest_first() -> None:
    async with console() as client:
        for number in range(120):
            body = {
                "message": {
                    "messageId": f"m{number}",
                    "role": "ROLE_USER",
                    "parts": [{"text": f"task {number}"}],
                },
                "metadata": {"skill": "report" if number % 2 else "echo"},
            }
            sent = await client.post("/message:send", json=body, headers={"A2A-Version": "1.0"})
            assert sent.status_code == 200
        seen: list[str] = []
        url: str | None = "/ui/tasks?skill=echo"
        while url is not None:
            listed = await client.get(url)
            assert listed.status_code == 200
            seen += re.findall(r'<tr data-task="([^"]+)"', listed.text)
            more = re.search(r'id="next-page" href="([^"]+)"', listed.text)
            url = more.group(1).replace("&amp;", "&") if more else None
    assert len(seen) == 60
    assert len(set(seen)) == 60


async def test_signing_in_keeps_the_credential_name_and_never_the_secret() -> None:
    settings = Settings(
        store=StoreSettings(kind="memory"),
        auth=AuthSettings(enabled=True, credentials=(CredentialSettings(name="ops", api_key=KEY),)),
    )
    async with console(settings) as client:
        first = await client.get("/ui/tasks")
        assert first.status_code == 303
        login = await client.get(first.headers["location"])
        before = client.cookies.get("a2a_hub_console")
        signed = await client.post(
            "/ui/login", data={"_csrf": token(login.text), "kind": "api_key", "secret": KEY}
        )
        assert signed.status_code == 303
        after = client.cookies.get("a2a_hub_console")
        overview = await client.get("/ui/")
    assert after != before  # a new session on sign-in
    assert KEY not in (after or "")
    assert overview.status_code == 200
    assert 'id="visitor">ops<' in overview.text
    assert KEY not in overview.text


PARTNERS = Registry(
    [inline_partner("translate", tags=("language",)), inline_partner("review", tags=("code",))]
)


async def test_a_card_is_refreshed_from_the_page_and_the_router_ranks_from_a_form() -> None:
    async with console(partners=PARTNERS) as client:
        listed = await client.get("/ui/partners")
        assert "Card checked" in listed.text
        refreshed = await client.post(
            "/ui/partners/translate/refresh", data={"_csrf": token(listed.text)}
        )
        unknown = await client.post(
            "/ui/partners/nobody/refresh", data={"_csrf": token(listed.text)}
        )
        ranked = await client.get("/ui/partners/route", params={"text": "x", "tag": "code"})
    assert refreshed.status_code == 303
    assert unknown.status_code == 404
    assert re.findall(r"<strong>(\w+ [\w-]+)</strong> score", ranked.text) == ["partner review"]


async def test_a_credential_sees_only_its_skills_and_partners() -> None:
    settings = Settings(
        store=StoreSettings(kind="memory"),
        auth=AuthSettings(
            enabled=True,
            credentials=(
                CredentialSettings(name="ops", api_key=KEY, skills=("echo",), agents=("review",)),
            ),
        ),
    )
    async with console(settings, partners=PARTNERS) as client:
        login = await client.get("/ui/login")
        await client.post(
            "/ui/login", data={"_csrf": token(login.text), "kind": "api_key", "secret": KEY}
        )
        partners = await client.get("/ui/partners")
        chat = await client.get("/ui/chat")
        hidden = await client.post(
            "/ui/partners/translate/refresh", data={"_csrf": token(partners.text)}
        )
    assert re.findall(r'data-partner="([^"]+)"', partners.text) == ["review"]
    assert re.findall(r'<option value="(\w+:\w+)"', chat.text) == ["skill:echo", "agent:review"]
    assert hidden.status_code == 404


@skill(id="waits", description="works until canceled")
async def waits(ctx: SkillContext) -> str:
    await ctx.progress("waiting")
    await anyio.sleep_forever()
    return "never"


async def test_a_running_task_is_canceled_from_its_page() -> None:
    async with console(skills={"waits": waits}) as client:
        page = await client.get("/ui/chat")
        sent = await client.post(
            "/ui/chat", data={"_csrf": token(page.text), "target": "skill:waits", "text": "go"}
        )
        task_page = await client.get(sent.headers["location"])
        assert 'id="cancel"' in task_page.text
        canceled = await client.post(
            f"{sent.headers['location']}/cancel", data={"_csrf": token(task_page.text)}
        )
        after = await client.get(canceled.headers["location"])
        again = await client.post(
            f"{sent.headers['location']}/cancel", data={"_csrf": token(task_page.text)}
        )
    assert canceled.status_code == 303
    assert 'id="task-state">canceled<' in after.text
    assert 'id="cancel"' not in after.text
    assert again.status_code == 400  # TaskNotCancelable, as through the A2A endpoints


async def test_a_partner_is_tried_through_the_gateway_and_its_task_has_a_page() -> None:
    async with serve_on_loopback(scripted("pong")) as partner_url:
        registry = Registry([AgentEntry(name="pong", url=partner_url)])
        async with console(partners=registry) as client:
            page = await client.get("/ui/chat")
            sent = await client.post(
                "/ui/chat", data={"_csrf": token(page.text), "target": "agent:pong", "text": "ping"}
            )
            path = sent.headers["location"]
            # The page's stream ends when the partner's task does (the transport buffers it).
            events = await client.get(f"{path}/events")
            task_page = await client.get(path)
    assert path.startswith("/ui/agents/pong/tasks/")
    assert events.text.endswith("event: end\ndata: {}\n\n")
    assert 'id="task-state">completed<' in task_page.text
    assert "pong" in task_page.text


async def test_a_partner_url_is_shown_without_its_query(refusing_port: int) -> None:
    where = f"127.0.0.1:{refusing_port}/a2a"
    # The card check's error names the URL it tried: without the query. (agents.yaml refuses
    # a URL with a user name or password; other URLs, in cards and errors, are cut by
    # `shown_url`, below.)
    registry = Registry([AgentEntry(name="query", url=f"http://{where}?token=s3cr3t-query")])
    async with console(partners=registry) as client:
        listed = await client.get("/ui/partners")
    assert listed.status_code == 200
    assert listed.text.count(f"http://{where}") >= 2
    assert listed.text.count("could not be") == 1  # the check failed, and says so
    assert "s3cr3t" not in listed.text


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:hunter2@127.0.0.1:8001/a2a?token=s3cr3t#x", "http://127.0.0.1:8001/a2a"),
        ("https://:hunter2@[::1]/a2a", "https://[::1]/a2a"),
        ("https://agent.example.com/a2a", "https://agent.example.com/a2a"),
        (None, ""),
    ],
)
def test_a_url_is_shown_without_user_password_query_or_fragment(
    url: str | None, shown: str
) -> None:
    assert shown_url(url) == shown
