"""The chat's routes over real HTTP on loopback: a turn streams its A2A events and the next
goes on in its context and task; what a turn attaches reaches the skill; CSRF, bad JSON,
oversized bodies and scopes are refused with a clear reason; a turn counts as an open
stream."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from hub.config import AuthSettings, CardSettings, CredentialSettings, LimitSettings
from tests.console.chat_hub import GREETING, PARTNER_CHUNKS, ChatHub, chat_hub

pytestmark = pytest.mark.anyio

KEY = "chat-route-key-6d1e9b3a7f"
SCOPED = "chat-scoped-key-2a8c5e0f4b"
WAIT = 20.0


def token(html: str) -> str:
    found = re.search(r'name="_csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


@asynccontextmanager
async def visitor(hub: ChatHub, key: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client on the chat page (signed in with `key` when given), carrying
    the page's CSRF token in the header the page's script sends."""
    async with httpx.AsyncClient(base_url=hub.url, timeout=WAIT) as client:
        if key is not None:
            login = await client.get("/ui/login")
            signed = await client.post(
                "/ui/login", data={"_csrf": token(login.text), "kind": "api_key", "secret": key}
            )
            assert signed.status_code == 303
        page = await client.get("/ui/chat")
        assert page.status_code == 200
        client.headers["X-CSRF-Token"] = token(page.text)
        yield client


def events(body: str) -> list[dict[str, Any]]:
    """The StreamResponse objects of a turn's stream, which must end with `end`."""
    assert body.endswith("event: end\ndata: {}\n\n"), body
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith('data: {"')]


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return [next(iter(event)) for event in found]


def last_status(found: list[dict[str, Any]]) -> dict[str, Any]:
    for event in reversed(found):
        if "statusUpdate" in event:
            status: dict[str, Any] = event["statusUpdate"]["status"]
            return status
        if "task" in event:
            status = event["task"]["status"]
            return status
    raise AssertionError("no status in the turn")


def answer_text(found: list[dict[str, Any]]) -> str:
    """The streamed answer joined as the page joins it: append chunks continue the text."""
    text = ""
    for event in found:
        if "artifactUpdate" in event:
            update = event["artifactUpdate"]
            chunk = "".join(part.get("text", "") for part in update["artifact"]["parts"])
            text = text + chunk if update.get("append") else chunk
    return text


async def turn(client: httpx.AsyncClient, **fields: str) -> httpx.Response:
    with anyio.fail_after(WAIT):
        return await client.post("/ui/chat/turn", data=fields)


async def test_a_conversation_goes_on_in_its_context_and_answers_the_waiting_task() -> None:
    async with chat_hub() as hub, visitor(hub) as client:
        first = await turn(client, target="skill:interview", text="hi")
        assert first.status_code == 200
        assert first.headers["content-type"].startswith("text/event-stream")
        asked = events(first.text)
        assert kinds(asked)[0] == "task"
        assert last_status(asked)["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert last_status(asked)["message"]["parts"][0]["text"] == "What is your name?"
        task = asked[0]["task"]
        answered = await turn(
            client,
            target="skill:interview",
            text="Ada",
            context_id=task["contextId"],
            task_id=task["id"],
        )
        done = events(answered.text)
        again = await turn(
            client, target="skill:interview", text="hi again", context_id=task["contextId"]
        )
        second = events(again.text)
    assert set(kinds(done)) == {"task", "statusUpdate", "artifactUpdate"}
    assert last_status(done)["state"] == "TASK_STATE_COMPLETED"
    assert {event[kind]["taskId"] for event in done[1:] for kind in event} == {task["id"]}
    assert answer_text(done) == "".join(GREETING).replace("{name}", "Ada")
    # A new task in the same context: the skill ran twice, in one context.
    assert second[0]["task"]["id"] != task["id"]
    assert second[0]["task"]["contextId"] == task["contextId"]
    assert hub.received.contexts == [task["contextId"], task["contextId"]]


async def test_a_partner_is_talked_to_through_the_gateway_and_its_question_answered() -> None:
    async with chat_hub() as hub, visitor(hub) as client:
        streamed = events((await turn(client, target="agent:pong", text="hello")).text)
        whole = events((await turn(client, target="agent:quiet", text="hello")).text)
        asked = events((await turn(client, target="agent:pong", text="weather?")).text)
        task = asked[0]["task"]
        answered = await turn(
            client,
            target="agent:pong",
            text="Lyon",
            context_id=task["contextId"],
            task_id=task["id"],
        )
        done = events(answered.text)
    assert "artifactUpdate" in kinds(streamed)
    assert answer_text(streamed) == "".join(PARTNER_CHUNKS)
    assert [event["task"]["artifacts"][0]["parts"] for event in whole] == [
        [{"text": "quietly: hello"}]
    ]
    assert last_status(asked)["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert last_status(done)["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(done) == "Sunny in Lyon"


async def test_delegate_and_swarm_take_their_partners_strategy_and_a_question() -> None:
    async with chat_hub() as hub, visitor(hub) as client:
        asked = events(
            (await turn(client, target="skill:delegate", agents="pong", text="weather?")).text
        )
        task = asked[0]["task"]
        answered = await turn(
            client,
            target="skill:delegate",
            agents="pong",
            text="Lyon",
            context_id=task["contextId"],
            task_id=task["id"],
        )
        done = events(answered.text)
        raced = events(
            (
                await turn(
                    client,
                    target="skill:swarm",
                    strategy="race",
                    agents="pong, quiet",
                    text="hello",
                )
            ).text
        )
    assert task["metadata"] == {"skill": "delegate", "agent": "pong"}
    assert last_status(asked)["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "Which city?" in json.dumps(last_status(asked))
    assert last_status(done)["state"] == "TASK_STATE_COMPLETED"
    assert answer_text(done) == "Sunny in Lyon"
    assert raced[0]["task"]["metadata"] == {
        "skill": "swarm",
        "strategy": "race",
        "agents": ["pong", "quiet"],
    }
    assert last_status(raced)["state"] == "TASK_STATE_COMPLETED"


async def test_a_hub_that_does_not_stream_answers_each_turn_with_its_task() -> None:
    async with chat_hub(card=CardSettings(streaming=False)) as hub, visitor(hub) as client:
        asked = events((await turn(client, target="skill:interview", text="hi")).text)
        task = asked[0]["task"]
        answered = await turn(
            client,
            target="skill:interview",
            text="Ada",
            context_id=task["contextId"],
            task_id=task["id"],
        )
        done = events(answered.text)
    assert kinds(asked) == kinds(done) == ["task"]
    assert last_status(asked)["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert last_status(done)["state"] == "TASK_STATE_COMPLETED"
    greeting = "".join(GREETING).replace("{name}", "Ada")
    assert done[0]["task"]["artifacts"][0]["parts"] == [{"text": greeting}]


async def test_metadata_a_data_part_and_files_reach_the_skill() -> None:
    async with chat_hub() as hub, visitor(hub) as client:
        with anyio.fail_after(WAIT):
            sent = await client.post(
                "/ui/chat/turn",
                data={
                    "target": "skill:inspect",
                    "text": "look",
                    "metadata": '{"ticket": 42, "skill": "echo"}',
                    "data": '{"rows": [1, 2, 3]}',
                },
                files=[
                    ("files", ("notes.txt", b"first file", "text/plain")),
                    ("files", ("blob.bin", b"\x00\x01\x02", "application/octet-stream")),
                ],
            )
        found = events(sent.text)
    assert last_status(found)["state"] == "TASK_STATE_COMPLETED"
    # The target names the skill: the routing the form chose wins over the metadata's.
    assert hub.received.metadata == [{"ticket": 42, "skill": "inspect"}]
    assert hub.received.data == [[{"rows": [1, 2, 3]}]]
    assert hub.received.files == [
        ("notes.txt", "text/plain", b"first file"),
        ("blob.bin", "application/octet-stream", b"\x00\x01\x02"),
    ]


@pytest.mark.parametrize("path", ["/ui/chat", "/ui/chat/turn"])
async def test_a_turn_without_the_session_token_is_refused_and_sends_nothing(path: str) -> None:
    async with chat_hub() as hub, visitor(hub) as client:
        del client.headers["X-CSRF-Token"]
        missing = await client.post(path, data={"target": "skill:echo", "text": "hi"})
        guessed = await client.post(
            path, data={"target": "skill:echo", "text": "hi"}, headers={"X-CSRF-Token": "x"}
        )
        listed = await client.get("/tasks", headers={"A2A-Version": "1.0"})
    assert [missing.status_code, guessed.status_code] == [403, 403]
    assert listed.json()["tasks"] == []


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"metadata": '{"ticket": 42'}, "the metadata is not valid JSON: Expecting ','"),
        ({"metadata": "[1, 2]"}, "the metadata must be a JSON object ({...}), not list"),
        ({"data": "{rows: 1}"}, "the data part is not valid JSON: Expecting property name"),
        ({"text": ""}, "the message is empty: write a text, or attach data or a file"),
    ],
    ids=["metadata-json", "metadata-object", "data-json", "empty"],
)
async def test_a_turn_that_is_not_well_formed_is_refused_with_the_reason(
    fields: dict[str, str], reason: str
) -> None:
    form = {"target": "skill:inspect", "text": "hi", **fields}
    async with chat_hub() as hub, visitor(hub) as client:
        streamed = await client.post("/ui/chat/turn", data=form)
        posted = await client.post("/ui/chat", data=form)
        listed = await client.get("/tasks", headers={"A2A-Version": "1.0"})
    assert streamed.status_code == 400
    assert streamed.headers["content-type"].startswith("text/plain")
    assert streamed.text.startswith(reason)
    assert posted.status_code == 400
    assert reason.replace("'", "&#39;") in posted.text
    assert listed.json()["tasks"] == []


async def test_an_upload_over_the_limits_is_refused_with_the_limit_named() -> None:
    limits = LimitSettings(max_body=64 * 1024, max_part_bytes=16 * 1024)
    async with chat_hub(limits=limits) as hub, visitor(hub) as client:
        whole = await client.post(
            "/ui/chat/turn",
            data={"target": "skill:inspect", "text": "big"},
            files={"files": ("big.bin", b"x" * (64 * 1024), "application/octet-stream")},
        )
        part = await client.post(
            "/ui/chat/turn",
            data={"target": "skill:inspect", "text": "big part"},
            files={"files": ("part.bin", b"x" * (20 * 1024), "application/octet-stream")},
        )
    assert whole.status_code == 413
    assert "larger than 65536 bytes, the limit (limits.max_body)" in whole.text
    assert part.status_code == 413
    assert "limits.max_part_bytes" in part.text
    assert hub.received.files == []


async def test_a_scoped_credential_reaches_only_its_skills_and_partners() -> None:
    auth = AuthSettings(
        enabled=True,
        credentials=(
            CredentialSettings(name="ops", api_key=KEY),
            CredentialSettings(
                name="scoped", api_key=SCOPED, skills=("interview",), agents=("pong",)
            ),
        ),
    )
    async with chat_hub(auth=auth) as hub:
        async with httpx.AsyncClient(base_url=hub.url, timeout=WAIT) as anonymous:
            away = await anonymous.get("/ui/chat")
        async with visitor(hub, SCOPED) as client:
            page = await client.get("/ui/chat")
            skill = await turn(client, target="skill:inspect", text="hi")
            partner = await turn(client, target="agent:quiet", text="hi")
            allowed = await turn(client, target="agent:pong", text="hello")
    assert away.status_code == 303
    assert re.findall(r'<option value="(\w+:\w+)"', page.text) == [
        "skill:interview",
        "agent:pong",
    ]
    assert skill.status_code == 403
    assert "inspect" in skill.text
    assert partner.status_code == 404
    assert answer_text(events(allowed.text)) == "".join(PARTNER_CHUNKS)
    assert hub.received.metadata == []


async def test_a_turn_counts_as_one_of_the_callers_open_streams() -> None:
    limits = LimitSettings(max_streams_per_caller=1)
    async with chat_hub(limits=limits) as hub, visitor(hub) as client:
        opened = anyio.Event()
        first: list[str] = []

        async def hold() -> None:
            async with client.stream(
                "POST", "/ui/chat/turn", data={"target": "skill:waits", "text": "hold"}
            ) as held:
                async for chunk in held.aiter_text():
                    first.append(chunk)
                    if "waiting for the test" in "".join(first):
                        opened.set()

        async with anyio.create_task_group() as group:
            group.start_soon(hold)
            with anyio.fail_after(WAIT):
                await opened.wait()
            refused = await turn(client, target="skill:echo", text="second")
            hub.received.release.set()
        after = await turn(client, target="skill:echo", text="third")
    assert refused.status_code == 429
    assert "limits.max_streams_per_caller" in refused.text
    assert "released" in "".join(first)
    assert after.status_code == 200


async def test_the_try_it_page_leads_to_the_chat() -> None:
    async with chat_hub() as hub, httpx.AsyncClient(base_url=hub.url) as client:
        moved = await client.get("/ui/try")
    assert moved.status_code == 301
    assert moved.headers["location"] == "/ui/chat"
