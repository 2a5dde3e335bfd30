"""Fuzzing both bindings on a hub with authentication on: requests with no credential, a wrong
one, the owner's and another caller's. Without a valid credential nothing but the card answers
(401 with a challenge); no request ever gets a 5xx or shows a secret; and a rejected request,
or any request from another caller, changes none of the owner's tasks.

The requests are those of `test_fuzz.py` (mutated JSON-RPC calls of both versions, REST calls
on every route), each sent with a credential drawn here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgi_lifespan import LifespanManager
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from hub.app import create_app
from hub.server.cors import CARD_PATHS
from hub.store import MemoryTaskStore
from tests.server.auth_hub import (
    ALICE,
    ALICE_KEY,
    BOB,
    BOB_TOKEN,
    CAROL,
    SECRETS,
    WRONG_KEY,
    auth_settings,
)
from tests.server.conftest import hub_skills
from tests.server.test_fuzz import (
    COMPLETED,
    ERROR_INFO,
    PARKED,
    TASK_TEMPLATES,
    V1_HEADERS,
    Call,
    Doc,
    Hub,
    Reply,
    Sent,
    any_rpc_calls,
    any_task,
    assert_jsonrpc_answer,
    assert_no_errors_logged,
    assert_rest_answer,
    exchange,
    mutated_rpc_calls,
    rest_calls,
    seeded_task,
    strict_json,
    weighted,
)

pytestmark = pytest.mark.anyio

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

OWNER, INTRUDER, NONE, BAD = "owner", "intruder", "none", "bad"
Headers = tuple[tuple[str, str], ...]

header_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=40,
)
credentials: st.SearchStrategy[tuple[str, Headers]] = weighted(
    (3, st.just((OWNER, tuple(ALICE.headers.items())))),
    (2, st.just((INTRUDER, tuple(BOB.headers.items())))),
    (1, st.just((INTRUDER, tuple(CAROL.headers.items())))),
    (1, st.just((NONE, ()))),
    (
        2,
        st.sampled_from(
            (
                (BAD, (("X-API-Key", WRONG_KEY),)),
                (BAD, (("Authorization", f"Bearer {WRONG_KEY}"),)),
                (BAD, (("Authorization", f"Bearer {ALICE_KEY}"),)),
                (BAD, (("X-API-Key", BOB_TOKEN),)),
                (BAD, (("Authorization", ALICE_KEY),)),
                (BAD, (("Authorization", f"Basic {BOB_TOKEN}"),)),
                (BAD, (("X-API-Key", ALICE_KEY), ("Authorization", f"Bearer {BOB_TOKEN}"))),
                (BAD, (("X-API-Key", ""),)),
            )
        ),
    ),
    (1, header_text.map(lambda text: (BAD, (("X-API-Key", text),)))),
    (1, header_text.map(lambda text: (BAD, (("Authorization", f"Bearer {text}"),)))),
)


def with_credential(call: Call, credential: Headers) -> Call:
    """`call` carrying `credential` instead of any header of the same name it had."""
    names = {name.lower() for name, _ in credential}
    kept = tuple(header for header in call.headers if header[0].lower() not in names)
    return Call(call.verb, call.path, call.query, kept + credential, call.body)


class AuthHub(Hub):
    """The seeded hub of `test_fuzz.py`, its tasks owned by Alice."""

    async def rpc(self, method: str, params: Any) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        headers = {**dict(V1_HEADERS), **ALICE.headers}
        reply = await exchange(self.app, Sent("POST", "/", b"", headers, body.encode()))
        document = strict_json(reply.body)
        assert "result" in document, document
        return document["result"]

    async def follow(self, task_id: str) -> None:
        body = {"jsonrpc": "2.0", "id": 0, "method": "SubscribeToTask", "params": {"id": task_id}}
        headers = {**dict(V1_HEADERS), **ALICE.headers}
        await exchange(self.app, Sent("POST", "/", b"", headers, json.dumps(body).encode()))


@pytest.fixture
async def seeded_hub(caplog: pytest.LogCaptureFixture) -> AsyncIterator[AuthHub]:
    caplog.set_level(logging.WARNING, logger="hub")
    app = create_app(auth_settings(), store=MemoryTaskStore(), skills=hub_skills())
    async with LifespanManager(app):
        served = AuthHub(app)
        await served.seed()
        yield served


def assert_no_secret(reply: Reply) -> None:
    assert secrets_absent(reply)


PROBE_PATHS = ("/healthz", "/readyz")


def secrets_absent(reply: Reply) -> bool:
    shown = reply.body.decode("utf-8", "replace") + json.dumps(reply.headers)
    return not any(secret in shown for secret in SECRETS)


def assert_refused_at_the_door(sent: Sent, reply: Reply) -> None:
    """No valid credential: a 401 with a challenge, in the shape of the binding the request
    reached; or the public card or probes; or an answer that no route exists (which serves
    nothing)."""
    if sent.path in CARD_PATHS and sent.verb in ("GET", "HEAD"):
        assert reply.status in (200, 304), reply
        event("no credential: the card")
        return
    if sent.path in PROBE_PATHS and sent.verb in ("GET", "HEAD"):
        # Liveness and readiness answer load balancers and orchestrators without credentials.
        assert reply.status == 200, reply
        assert secrets_absent(reply)
        event("no credential: a probe")
        return
    if reply.status == 401:
        assert reply.headers["www-authenticate"].startswith(("Bearer realm=", "ApiKey realm="))
        document = strict_json(reply.body)
        if "jsonrpc" in document:
            assert document["id"] is None
            assert document["error"]["code"] == -32000
            info = document["error"]["data"][0]
        else:
            assert document["error"]["code"] == 401
            assert document["error"]["status"] == "UNAUTHENTICATED"
            info = document["error"]["details"][0]
        assert (info["@type"], info["reason"]) == (ERROR_INFO, "UNAUTHENTICATED")
        event("no credential: 401")
        return
    if reply.status == 204:  # Litestar's automatic OPTIONS answer: the verbs of a route
        assert sent.verb == "OPTIONS"
        assert reply.body == b""
        event("no credential: OPTIONS")
        return
    assert reply.status in (404, 405), (reply.status, reply.body)
    document = strict_json(reply.body)
    assert document["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"
    event("no credential: no such route")


async def check_one(seeded_hub: AuthHub, call: Call, who: str, credential: Headers) -> None:
    sent, reply = await seeded_hub.send(with_credential(call, credential))
    assert reply.status < 500, (reply.status, reply.body)
    assert_no_secret(reply)
    if who in (NONE, BAD):
        assert_refused_at_the_door(sent, reply)
        rejected = True
    elif sent.path == "/":
        rejected = assert_jsonrpc_answer(sent, reply)
    else:
        rejected = assert_rest_answer(sent, reply)
    # Nothing another caller sends can change the owner's tasks, accepted or not.
    await seeded_hub.check_tasks(rejected=rejected or who == INTRUDER)


@FUZZ
@given(call=any_rpc_calls, credential=credentials)
@example(
    call=Call("POST", "/", (), V1_HEADERS, Doc({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"})),
    credential=(NONE, ()),
)
@example(
    call=Call(
        "POST",
        "/",
        (),
        V1_HEADERS,
        Doc({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": PARKED}}),
    ),
    credential=(INTRUDER, tuple(BOB.headers.items())),
)
async def test_every_jsonrpc_request_is_answered_by_credential_and_never_with_a_5xx(
    seeded_hub: AuthHub,
    caplog: pytest.LogCaptureFixture,
    call: Call,
    credential: tuple[str, Headers],
) -> None:
    caplog.clear()
    await check_one(seeded_hub, call, *credential)
    assert_no_errors_logged(caplog)


@FUZZ
@given(call=rest_calls(any_task), credential=credentials)
@example(
    call=Call("POST", f"/tasks/{COMPLETED}:cancel", (), V1_HEADERS),
    credential=(BAD, (("Authorization", f"Bearer {WRONG_KEY}"),)),
)
async def test_every_rest_request_is_answered_by_credential_and_never_with_a_5xx(
    seeded_hub: AuthHub,
    caplog: pytest.LogCaptureFixture,
    call: Call,
    credential: tuple[str, Headers],
) -> None:
    caplog.clear()
    await check_one(seeded_hub, call, *credential)
    assert_no_errors_logged(caplog)


@FUZZ
@given(
    call=weighted(
        (2, mutated_rpc_calls(seeded_task, TASK_TEMPLATES, most=2)),
        (1, rest_calls(seeded_task)),
    ),
    credential=credentials,
)
async def test_requests_aimed_at_the_owners_tasks_change_them_only_for_the_owner(
    seeded_hub: AuthHub,
    caplog: pytest.LogCaptureFixture,
    call: Call,
    credential: tuple[str, Headers],
) -> None:
    caplog.clear()
    await check_one(seeded_hub, call, *credential)
    assert_no_errors_logged(caplog)
