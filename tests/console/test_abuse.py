"""The console under abuse: anonymous visitors in any number sign no one out, the sign-in
form still refuses forged posts, and no form reads a body over `limits.max_body`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import AuthSettings, CredentialSettings, LimitSettings, Settings, StoreSettings
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.console.test_pages import KEY, console, token

pytestmark = pytest.mark.anyio

AUTH = Settings(
    store=StoreSettings(kind="memory"),
    auth=AuthSettings(enabled=True, credentials=(CredentialSettings(name="ops", api_key=KEY),)),
)
COOKIE = "a2a_hub_console"


async def sign_in(client: httpx.AsyncClient) -> None:
    login = await client.get("/ui/login")
    signed = await client.post(
        "/ui/login", data={"_csrf": token(login.text), "kind": "api_key", "secret": KEY}
    )
    assert signed.status_code == 303


@asynccontextmanager
async def two_browsers(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, ...]]:
    """Two clients of one hub in process, each with a cookie jar of its own."""
    app = create_app(settings, store=MemoryTaskStore(), skills={"echo": echo})
    transport = httpx.ASGITransport(app)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=transport, base_url="http://hub") as first,
        httpx.AsyncClient(transport=transport, base_url="http://hub") as second,
    ):
        yield first, second


@pytest.mark.slow
async def test_anonymous_visits_past_the_session_store_sign_no_one_out() -> None:
    async with two_browsers(AUTH) as (operator, anonymous):
        await sign_in(operator)
        for _ in range(10_016):  # the store kept 10,000 sessions
            anonymous.cookies.clear()
            visit = await anonymous.get("/ui/login")
            assert visit.status_code == 200
        overview = await operator.get("/ui/")
    assert overview.status_code == 200
    assert 'id="visitor">ops<' in overview.text


async def test_the_sign_in_form_refuses_a_post_without_its_own_token() -> None:
    async with console(AUTH) as victim, console(AUTH) as _:
        login = await victim.get("/ui/login")
        form = {"kind": "api_key", "secret": KEY}
        missing = await victim.post("/ui/login", data=form)
        guessed = await victim.post("/ui/login", data={**form, "_csrf": "guessed"})
        # A token is good only with the cookie it was given with.
        cookie = victim.cookies[COOKIE]
        victim.cookies.clear()
        other = await victim.get("/ui/login")
        victim.cookies.clear()
        victim.cookies.set(COOKIE, cookie)
        swapped = await victim.post("/ui/login", data={**form, "_csrf": token(other.text)})
        victim.cookies.clear()
        no_cookie = await victim.post("/ui/login", data={**form, "_csrf": token(login.text)})
        victim.cookies.set(COOKIE, cookie)
        elsewhere = await victim.post(
            "/ui/login",
            data={**form, "_csrf": token(login.text)},
            headers={"Origin": "http://elsewhere.example"},
        )
        signed = await victim.post("/ui/login", data={**form, "_csrf": token(login.text)})
    assert [missing.status_code, guessed.status_code, swapped.status_code] == [403, 403, 403]
    assert [no_cookie.status_code, elsewhere.status_code] == [403, 403]
    assert signed.status_code == 303


# -- bodies ----------------------------------------------------------------------------------

LIMIT = 64 * 1024
"""`limits.max_body` in these tests."""
BIG = 64 * LIMIT
"""What the uploads would send if they were let."""
CHUNK = 16 * 1024
FORMS = [
    "/ui/login",
    "/ui/logout",
    "/ui/chat",
    "/ui/chat/turn",
    "/ui/partners/translate/refresh",
    "/ui/tasks/some-task/cancel",
    "/ui/tasks/some-task/answer",
    "/ui/agents/translate/tasks/some-task/cancel",
    "/ui/agents/translate/tasks/some-task/answer",
]
ANONYMOUS_FORMS = ["/ui/login", "/ui/logout"]


@asynccontextmanager
async def loopback_console(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    limited = settings.model_copy(update={"limits": LimitSettings(max_body=LIMIT)})
    app = create_app(limited, store=MemoryTaskStore(), skills={"echo": echo})
    async with serve_on_loopback(app) as url, httpx.AsyncClient(base_url=url) as client:
        yield client


async def upload(client: httpx.AsyncClient, path: str, *, declared: bool) -> tuple[bytes, int]:
    """POST a form of `BIG` bytes (with the client's cookies and, first, the form's token)
    on a connection of its own, one chunk at a time until the server answers; the answer's
    status line, and how much of the body had been sent by then."""
    head = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/x-www-form-urlencoded",
        f"Content-Length: {BIG}" if declared else "Transfer-Encoding: chunked",
    ]
    if client.cookies:
        head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in client.cookies.items()))
    sent = 0
    answer = b""

    async def send_body() -> None:
        nonlocal sent
        try:
            await stream.send(("\r\n".join(head) + "\r\n\r\n").encode())
            while sent < BIG:
                chunk = b"a" * CHUNK
                await stream.send(chunk if declared else b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            if not declared:
                await stream.send(b"0\r\n\r\n")
        except (anyio.BrokenResourceError, OSError):
            pass  # the server answered and closed the connection

    port = int(str(client.base_url).rstrip("/").rsplit(":", 1)[1])
    stream = await anyio.connect_tcp("127.0.0.1", port)
    async with stream, anyio.create_task_group() as group:
        group.start_soon(send_body)
        with anyio.fail_after(30):
            while b"\r\n" not in answer:
                answer += await stream.receive()
        group.cancel_scope.cancel()
    return answer.split(b"\r\n", 1)[0], sent


async def refusals(client: httpx.AsyncClient, paths: list[str]) -> dict[str, list[object]]:
    found: dict[str, list[object]] = {}
    for path in paths:
        for declared in (True, False):
            status, sent = await upload(client, path, declared=declared)
            found.setdefault(path, []).extend([status, sent < BIG])
    return found


TOO_LARGE = [b"HTTP/1.1 413 Request Entity Too Large", True] * 2


async def test_an_anonymous_form_over_max_body_is_refused_before_it_is_read() -> None:
    async with loopback_console(AUTH) as client:
        await client.get("/ui/login")  # a visitor with a cookie, signed in or not
        with_cookie = await refusals(client, ANONYMOUS_FORMS)
        client.cookies.clear()
        without = await refusals(client, ANONYMOUS_FORMS)
    assert with_cookie == without == dict.fromkeys(ANONYMOUS_FORMS, TOO_LARGE)


@pytest.mark.parametrize("auth", [True, False], ids=["signed-in", "auth-off"])
async def test_every_console_form_over_max_body_is_refused_before_it_is_read(auth: bool) -> None:
    async with loopback_console(
        AUTH if auth else Settings(store=StoreSettings(kind="memory"))
    ) as client:
        if auth:
            await sign_in(client)
        else:
            await client.get("/ui/")
        found = await refusals(client, FORMS)
    assert found == dict.fromkeys(FORMS, TOO_LARGE)
