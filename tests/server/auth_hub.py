"""A hub with authentication on, its callers, and the three doors (JSON-RPC 1.0, JSON-RPC 0.3,
HTTP+JSON 1.0) a request can come through, for the auth, isolation and limit tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import (
    AuthSettings,
    CardSettings,
    CorsSettings,
    CredentialSettings,
    LimitSettings,
    PushSettings,
    Settings,
)
from hub.skills import Skill, SkillContext, skill
from hub.store import MemoryTaskStore
from tests.server.conftest import hub_skills

ALICE_KEY = "alice-api-key-7f3a9c1e5b"
BOB_TOKEN = "bob-bearer-token-2d8e4f6a0c"
CAROL_KEY = "carol-api-key-9b1d3f5e7a"
WRONG_KEY = "wrong-api-key-0000000000"
SECRETS = (ALICE_KEY, BOB_TOKEN, CAROL_KEY, WRONG_KEY)

HOOK = "http://127.0.0.1:9/hook"
"""A webhook the SSRF guard lets through (loopback is allow-listed); nothing listens there,
and no test makes the task it watches change."""


@skill(id="waits", description="works until canceled")
async def waits(ctx: SkillContext) -> str:
    await ctx.progress("waiting")
    await anyio.sleep_forever()
    return "never"


def auth_skills() -> dict[str, Skill]:
    return {**hub_skills(), "waits": waits}


@dataclass(frozen=True)
class Credential:
    name: str
    headers: dict[str, str]


ALICE = Credential("alice", {"X-API-Key": ALICE_KEY})
BOB = Credential("bob", {"Authorization": f"Bearer {BOB_TOKEN}"})
CAROL = Credential("carol", {"X-API-Key": CAROL_KEY})
NOBODY = Credential("", {})


def auth_settings(
    *, card: CardSettings | None = None, cors: CorsSettings | None = None, **limits: Any
) -> Settings:
    """Alice (API key, every skill), Bob (bearer token, every skill) and Carol (API key, echo
    and interview only, no partner); no request rate limit unless one is given."""
    credentials = (
        CredentialSettings(name="alice", api_key=ALICE_KEY),
        CredentialSettings(name="bob", bearer=BOB_TOKEN),
        CredentialSettings(
            name="carol", api_key=CAROL_KEY, skills=("echo", "interview"), agents=()
        ),
    )
    return Settings(
        auth=AuthSettings(enabled=True, credentials=credentials),
        limits=LimitSettings.model_validate({"max_body": 4096, "requests_per_second": 0, **limits}),
        card=card or CardSettings(extended_card=True),
        push=PushSettings(allow_hosts=("127.0.0.1",), retry_delays=(0.01,), timeout=1.0),
        cors=cors or CorsSettings(),
    )


@asynccontextmanager
async def serve_in_process(
    settings: Settings, *, skills: dict[str, Skill] | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """The hub built from `settings` (serving `skills`, the auth tests' by default), with an
    httpx client talking to it in process."""
    app = create_app(settings, store=MemoryTaskStore(), skills=skills or auth_skills())
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http


def message(text: str, *, task_id: str | None = None, v03: bool = False) -> dict[str, Any]:
    if v03:
        body: dict[str, Any] = {
            "kind": "message",
            "messageId": uuid.uuid4().hex,
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }
    else:
        body = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    if task_id is not None:
        body["taskId"] = task_id
    return body


@dataclass(frozen=True)
class Outcome:
    """What came back, reduced to what the tests compare."""

    status: int
    result: Any = None
    code: int | None = None
    reason: str | None = None
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is None and self.reason is None


def outcome_of(response: httpx.Response) -> Outcome:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return Outcome(response.status_code, result="stream")
    document = json.loads(response.content) if response.content else None
    if isinstance(document, dict) and "jsonrpc" in document:
        error = document.get("error")
        if error is None:
            return Outcome(response.status_code, result=document["result"])
        data = error.get("data")
        reason = data[0]["reason"] if isinstance(data, list) and data else None
        return Outcome(
            response.status_code, code=error["code"], reason=reason, message=error["message"]
        )
    if response.status_code >= 400:
        error = document["error"]
        return Outcome(
            response.status_code,
            code=error["code"],
            reason=error["details"][0]["reason"],
            message=error["message"],
        )
    return Outcome(response.status_code, result=document)


@dataclass(frozen=True)
class Door:
    """One binding and version: how each operation is sent through it."""

    name: str

    @property
    def v03(self) -> bool:
        return self.name == "jsonrpc-0.3"

    async def call(
        self, http: httpx.AsyncClient, who: Credential, operation: str, task_id: str = ""
    ) -> Outcome:
        with anyio.fail_after(5):
            if self.name == "rest-1.0":
                verb, path, body = _rest(operation, task_id)
                response = await http.request(
                    verb,
                    path,
                    json=body,
                    headers={"A2A-Version": "1.0", **who.headers},
                )
            else:
                method, params = (_v03 if self.v03 else _v1)(operation, task_id)
                headers = {} if self.v03 else {"A2A-Version": "1.0"}
                envelope = {"jsonrpc": "2.0", "id": 7, "method": method}
                if params is not None:
                    envelope["params"] = params
                response = await http.post("/", json=envelope, headers={**headers, **who.headers})
        return outcome_of(response)


DOORS = (Door("jsonrpc-1.0"), Door("jsonrpc-0.3"), Door("rest-1.0"))

TASK_OPERATIONS = (
    "get",
    "cancel",
    "subscribe",
    "send",
    "stream",
    "push_create",
    "push_get",
    "push_list",
    "push_delete",
)
"""The operations that name a task; each must answer TaskNotFound for another caller's."""


def _v1(operation: str, task_id: str) -> tuple[str, Any]:
    match operation:
        case "get":
            return "GetTask", {"id": task_id}
        case "cancel":
            return "CancelTask", {"id": task_id}
        case "subscribe":
            return "SubscribeToTask", {"id": task_id}
        case "send":
            return "SendMessage", {"message": message("hi", task_id=task_id)}
        case "stream":
            return "SendStreamingMessage", {"message": message("hi", task_id=task_id)}
        case "push_create":
            return "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": HOOK}
        case "push_get":
            return "GetTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg"}
        case "push_list":
            return "ListTaskPushNotificationConfigs", {"taskId": task_id}
        case "push_delete":
            return "DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": "cfg"}
        case "list":
            return "ListTasks", {}
        case "extended_card":
            return "GetExtendedAgentCard", {}
        case "start":
            return "SendMessage", {"message": message("hello")}
    raise AssertionError(operation)


def _v03(operation: str, task_id: str) -> tuple[str, Any]:
    match operation:
        case "get":
            return "tasks/get", {"id": task_id}
        case "cancel":
            return "tasks/cancel", {"id": task_id}
        case "subscribe":
            return "tasks/resubscribe", {"id": task_id}
        case "send":
            return "message/send", {"message": message("hi", task_id=task_id, v03=True)}
        case "stream":
            return "message/stream", {"message": message("hi", task_id=task_id, v03=True)}
        case "push_create":
            return "tasks/pushNotificationConfig/set", {
                "taskId": task_id,
                "pushNotificationConfig": {"id": "cfg", "url": HOOK},
            }
        case "push_get":
            return "tasks/pushNotificationConfig/get", {
                "id": task_id,
                "pushNotificationConfigId": "cfg",
            }
        case "push_list":
            return "tasks/pushNotificationConfig/list", {"id": task_id}
        case "push_delete":
            return "tasks/pushNotificationConfig/delete", {
                "id": task_id,
                "pushNotificationConfigId": "cfg",
            }
        case "list":
            return "ListTasks (none in 0.3)", {}
        case "extended_card":
            return "agent/getAuthenticatedExtendedCard", None
        case "start":
            return "message/send", {"message": message("hello", v03=True)}
    raise AssertionError(operation)


def _rest(operation: str, task_id: str) -> tuple[str, str, Any]:
    match operation:
        case "get":
            return "GET", f"/tasks/{task_id}", None
        case "cancel":
            return "POST", f"/tasks/{task_id}:cancel", None
        case "subscribe":
            return "POST", f"/tasks/{task_id}:subscribe", None
        case "send":
            return "POST", "/message:send", {"message": message("hi", task_id=task_id)}
        case "stream":
            return "POST", "/message:stream", {"message": message("hi", task_id=task_id)}
        case "push_create":
            return "POST", f"/tasks/{task_id}/pushNotificationConfigs", {"url": HOOK}
        case "push_get":
            return "GET", f"/tasks/{task_id}/pushNotificationConfigs/cfg", None
        case "push_list":
            return "GET", f"/tasks/{task_id}/pushNotificationConfigs", None
        case "push_delete":
            return "DELETE", f"/tasks/{task_id}/pushNotificationConfigs/cfg", None
        case "list":
            return "GET", "/tasks", None
        case "extended_card":
            return "GET", "/extendedAgentCard", None
        case "start":
            return "POST", "/message:send", {"message": message("hello")}
    raise AssertionError(operation)
