"""Extensions: declared in the card from the settings, required of every A2A operation on the
hub's own endpoints (or of the messages to one skill), activated by the request's
`A2A-Extensions` header (0.3: `X-A2A-Extensions`), echoed back, and visible to the skill."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from hub.app import create_app
from hub.config import CardSettings, LimitSettings, Settings
from hub.errors import ConfigError
from hub.skills import Skill, SkillContext, skill
from hub.store import MemoryTaskStore
from tests.a2a_schema import v1_problems
from tests.server.auth_hub import message, serve_in_process
from tests.server.conftest import hub_skills

pytestmark = pytest.mark.anyio

TRACE = "https://example.com/extensions/trace/v1"
CITE = "https://example.com/extensions/cite/v1"
SECRET = "https://example.com/extensions/secret/v2"
UNKNOWN = "https://example.com/extensions/unknown/v1"
V1 = {"A2A-Version": "1.0"}


@skill(id="extensions", description="answers with the extensions it sees")
async def extensions_skill(ctx: SkillContext) -> str:
    return ",".join(sorted(ctx.extensions)) or "none"


@skill(id="extensions-reply", description="replies with the extensions it sees", reply="message")
async def extensions_reply(ctx: SkillContext) -> str:
    return ",".join(sorted(ctx.extensions)) or "none"


def skills() -> dict[str, Skill]:
    return {**hub_skills(), "extensions": extensions_skill, "extensions-reply": extensions_reply}


def settings(*extensions: dict[str, Any]) -> Settings:
    return Settings(
        limits=LimitSettings(requests_per_second=0),
        card=CardSettings.model_validate({"extensions": list(extensions)}),
    )


REQUIRED_HUB = settings(
    {
        "uri": TRACE,
        "description": "every request carries a trace",
        "required": True,
        "params": {"format": "w3c", "levels": [1, 2]},
    },
    {"uri": CITE, "description": "answers cite their sources"},
)
SKILL_HUB = settings({"uri": SECRET, "required": True, "skills": ["interview", "extensions"]})


@asynccontextmanager
async def hub(hub_settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with serve_in_process(hub_settings, skills=skills()) as http:
        yield http


async def rpc(
    http: httpx.AsyncClient, method: str, params: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return await http.post("/", json=body, headers=headers)


def refusal(missing: str) -> list[dict[str, Any]]:
    return [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "EXTENSION_SUPPORT_REQUIRED",
            "domain": "a2a-protocol.org",
            "metadata": {"extensions": missing},
        }
    ]


async def test_the_card_declares_the_configured_extensions() -> None:
    async with hub(REQUIRED_HUB) as http:
        pure = (await http.get("/.well-known/agent-card.json", headers=V1)).json()
        hybrid = (await http.get("/.well-known/agent-card.json")).json()
    declared = [
        {
            "uri": TRACE,
            "description": "every request carries a trace",
            "required": True,
            "params": {"format": "w3c", "levels": [1, 2]},
        },
        {"uri": CITE, "description": "answers cite their sources", "required": False},
    ]
    assert pure["capabilities"]["extensions"] == declared
    assert hybrid["capabilities"]["extensions"] == declared
    assert v1_problems("Agent Card", pure) == []


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("SendMessage", {"message": message("hi")}),
        ("SendStreamingMessage", {"message": message("hi")}),
        ("GetTask", {"id": "nothing"}),
        ("ListTasks", {}),
        ("CancelTask", {"id": "nothing"}),
    ],
)
async def test_a_request_without_a_required_extension_gets_32008_on_jsonrpc_10(
    method: str, params: dict[str, Any]
) -> None:
    async with hub(REQUIRED_HUB) as http:
        response = await rpc(http, method, params, {**V1, "A2A-Extensions": CITE})
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32008
    assert error["data"] == refusal(TRACE)
    assert TRACE in error["message"]
    assert "a2a-extensions" not in response.headers


async def test_on_the_03_door_the_refusal_is_32603_which_03_knows() -> None:
    async with hub(REQUIRED_HUB) as http:
        response = await rpc(http, "message/send", {"message": message("hi", v03=True)}, {})
    error = response.json()["error"]
    # 0.3 has no -32008 (nor -32009): the hub sends those as -32603 through the 0.3 door,
    # with the reason in the free-form 0.3 `data`.
    assert error == {
        "code": -32603,
        "message": error["message"],
        "data": {"reason": "EXTENSION_SUPPORT_REQUIRED", "metadata": {"extensions": TRACE}},
    }
    assert TRACE in error["message"]


async def test_a_request_without_a_required_extension_gets_400_on_rest() -> None:
    async with hub(REQUIRED_HUB) as http:
        sent = await http.post("/message:send", json={"message": message("hi")}, headers=V1)
        listed = await http.get("/tasks", headers=V1)
    for response in (sent, listed):
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["status"] == "FAILED_PRECONDITION"
        assert error["details"] == refusal(TRACE)


async def test_the_public_card_needs_no_extension() -> None:
    async with hub(REQUIRED_HUB) as http:
        response = await http.get("/.well-known/agent-card.json")
    assert response.status_code == 200


async def test_listed_extensions_are_activated_echoed_and_seen_by_the_skill() -> None:
    listed = f"{TRACE}, {UNKNOWN}"  # an extension the hub does not know is accepted, ignored
    async with hub(REQUIRED_HUB) as http:
        task = await rpc(
            http,
            "SendMessage",
            {"message": message("x"), "metadata": {"skill": "extensions"}},
            {**V1, "A2A-Extensions": listed, "X-A2A-Extensions": CITE},
        )
        reply = await rpc(
            http,
            "SendMessage",
            {"message": message("x"), "metadata": {"skill": "extensions-reply"}},
            {**V1, "A2A-Extensions": listed},
        )
        rest = await http.post(
            "/message:send",
            json={"message": message("x"), "metadata": {"skill": "extensions"}},
            headers={**V1, "A2A-Extensions": TRACE},
        )
        stream = await rpc(
            http,
            "SendStreamingMessage",
            {"message": message("x")},
            {**V1, "A2A-Extensions": listed},
        )
        legacy = await rpc(
            http,
            "message/send",
            {"message": message("x", v03=True), "metadata": {"skill": "extensions"}},
            {"X-A2A-Extensions": f"{TRACE},{CITE}"},
        )
    assert task.headers["a2a-extensions"] == f"{CITE},{TRACE}"
    assert task.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": f"{CITE},{TRACE}"}]
    assert reply.headers["a2a-extensions"] == TRACE
    assert reply.json()["result"]["message"]["parts"] == [{"text": TRACE}]
    assert rest.status_code == 200
    assert rest.headers["a2a-extensions"] == TRACE
    assert rest.json()["task"]["artifacts"][0]["parts"] == [{"text": TRACE}]
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert stream.headers["a2a-extensions"] == TRACE
    # Through the 0.3 door the echo has the 0.3 name.
    assert legacy.headers["x-a2a-extensions"] == f"{CITE},{TRACE}"
    assert "a2a-extensions" not in legacy.headers
    assert legacy.json()["result"]["artifacts"][0]["parts"] == [
        {"kind": "text", "text": f"{CITE},{TRACE}"}
    ]


async def test_a_hub_without_extensions_echoes_nothing_and_the_skill_sees_none() -> None:
    async with hub(settings()) as http:
        response = await rpc(
            http,
            "SendMessage",
            {"message": message("x"), "metadata": {"skill": "extensions"}},
            {**V1, "A2A-Extensions": UNKNOWN},
        )
    assert "a2a-extensions" not in response.headers
    assert response.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "none"}]


async def test_a_skill_scoped_extension_is_required_of_messages_to_that_skill_only() -> None:
    async with hub(SKILL_HUB) as http:
        card = (await http.get("/.well-known/agent-card.json", headers=V1)).json()
        echo = await rpc(http, "SendMessage", {"message": message("hi")}, V1)
        refused = await rpc(
            http,
            "SendMessage",
            {"message": message("hi"), "metadata": {"skill": "interview"}},
            V1,
        )
        started = await rpc(
            http,
            "SendMessage",
            {"message": message("hi"), "metadata": {"skill": "interview"}},
            {**V1, "A2A-Extensions": SECRET},
        )
        task_id = started.json()["result"]["task"]["id"]
        answer_without = await rpc(
            http, "SendMessage", {"message": message("Ada", task_id=task_id)}, V1
        )
        answer_with = await rpc(
            http,
            "SendMessage",
            {"message": message("Ada", task_id=task_id)},
            {**V1, "A2A-Extensions": SECRET},
        )
        rest = await http.post(
            "/message:send",
            json={"message": message("hi"), "metadata": {"skill": "extensions"}},
            headers=V1,
        )
    # The card cannot put an extension on a skill: it is listed hub-wide, not required.
    assert card["capabilities"]["extensions"] == [
        {
            "uri": SECRET,
            "description": "Required for messages to skills 'interview', 'extensions'",
            "required": False,
        }
    ]
    assert echo.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert refused.json()["error"]["code"] == -32008
    assert refused.json()["error"]["data"] == refusal(SECRET)
    assert started.json()["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert answer_without.json()["error"]["code"] == -32008
    assert answer_with.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest.status_code == 400
    assert rest.json()["error"]["details"] == refusal(SECRET)


def test_an_extension_naming_an_unknown_skill_is_a_start_up_error() -> None:
    with pytest.raises(ConfigError, match="nosuch"):
        create_app(
            settings({"uri": SECRET, "required": True, "skills": ["nosuch"]}),
            store=MemoryTaskStore(),
            skills=skills(),
        )


@pytest.mark.parametrize(
    ("extension", "where"),
    [
        ({"description": "no uri"}, "uri"),
        ({"uri": "not a uri"}, "uri"),
        ({"uri": f"{TRACE},{CITE}"}, "uri"),
        ({"uri": TRACE, "params": ["not", "an", "object"]}, "params"),
        ({"uri": TRACE, "requierd": True}, "requierd"),
    ],
)
def test_extension_settings_are_checked(extension: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CardSettings.model_validate({"extensions": [extension]})
    assert [error["loc"][:3] for error in caught.value.errors()] == [("extensions", 0, where)]


def test_an_extension_declared_twice_is_refused() -> None:
    with pytest.raises(ValidationError, match="declared twice"):
        CardSettings.model_validate({"extensions": [{"uri": TRACE}, {"uri": TRACE}]})
