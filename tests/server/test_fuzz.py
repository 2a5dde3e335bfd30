"""Fuzzing both bindings: every request, however broken, gets a well-formed answer and never a
5xx, and a rejected request changes no stored task.

Requests are driven straight through the ASGI interface rather than `httpx.ASGITransport`:
that transport buffers a whole response, so a stream on a parked task would never return.
The driver here closes a stream (sends `http.disconnect`) once it shows an interrupted task.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import pytest
from asgi_lifespan import LifespanManager
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from litestar import Litestar

from hub.app import create_app
from hub.store import MemoryTaskStore
from tests.server.conftest import hub_settings, hub_skills

pytestmark = pytest.mark.anyio

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Stand-ins for the seeded tasks' ids, replaced when a request is sent.
COMPLETED = "@@completed-task@@"
PARKED = "@@parked-task@@"
CONTEXT = "@@completed-context@@"
PLACEHOLDERS = (COMPLETED, PARKED, CONTEXT)

MAX_BODY = hub_settings().limits.max_body
V1_METHODS = (
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
)
V03_METHODS = (
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
)
STREAM_METHODS = ("SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe")
RPC_CODES = frozenset({-32700, -32600, -32601, -32602, -32603, *range(-32009, -32000)})
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
JSON_TYPES = ("application/json", "application/a2a+json")
STREAM_KEYS = frozenset({"task", "message", "statusUpdate", "artifactUpdate"})
LEAKS = ("Traceback", "/work", ".py", 'File "')
INTERRUPTED = frozenset(
    {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED", "input-required", "auth-required"}
)
V1_HEADERS = (("A2A-Version", "1.0"), ("Content-Type", "application/json"))


# -- the wire: requests as the fuzzer builds them, and an ASGI driver -------------------------


@dataclass(frozen=True)
class Doc:
    """A JSON body, encoded when sent (after the placeholders are replaced)."""

    value: Any
    ascii: bool = True
    damage: str = ""  # "", "bom", "utf-16" or "cut"

    def encode(self, ids: dict[str, str]) -> bytes:
        text = json.dumps(resolve(self.value, ids), ensure_ascii=self.ascii)
        data = text.encode("utf-8", "surrogatepass")
        if self.damage == "bom":
            return b"\xef\xbb\xbf" + data
        if self.damage == "utf-16":
            return text.encode("utf-16", "surrogatepass")
        if self.damage == "cut":
            return data[: len(data) // 2]
        return data


@dataclass(frozen=True)
class Call:
    verb: str
    path: str
    query: tuple[tuple[str, str], ...] | str = ()
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | Doc = b""


@dataclass(frozen=True)
class Sent:
    """A call as it went out: placeholders replaced, body encoded."""

    verb: str
    path: str
    query: bytes
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return f"{self.path} {self.query!r} {self.headers} {self.body!r}"


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def media_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    def events(self) -> list[Any]:
        """The `data:` payloads of an SSE body, each parsed as JSON."""
        found = []
        for block in self.body.split(b"\n\n"):
            lines = [line for line in block.split(b"\n") if line and not line.startswith(b":")]
            if not lines:
                continue
            assert all(line.startswith(b"data: ") for line in lines), block
            found.append(strict_json(b"\n".join(line[6:] for line in lines)))
        return found


def resolve(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {key: resolve(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, ids) for item in value]
    return value


def render(call: Call, ids: dict[str, str]) -> Sent:
    path = call.path
    for placeholder, real in ids.items():
        path = path.replace(placeholder, real)
    if isinstance(call.query, str):
        query = call.query.encode()
    else:
        pairs = [(key, ids.get(value, value)) for key, value in call.query]
        query = urlencode(pairs, quote_via=quote).encode()
    body = call.body.encode(ids) if isinstance(call.body, Doc) else call.body
    headers = {name.lower(): value for name, value in call.headers}
    return Sent(call.verb, path, query, headers, body)


async def exchange(app: Litestar, sent: Sent) -> Reply:
    """One request through the app's ASGI interface; a stream is read to its end, or closed
    once it shows an interrupted task (which would otherwise stay open)."""
    finished = anyio.Event()
    delivered = False
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": sent.body, "more_body": False}
        await finished.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert not start, "the response was started twice"
            start.update(message)
            return
        assert start, "a body was sent before the response was started"
        chunks.append(message.get("body", b""))
        streaming = any(
            name.lower() == b"content-type" and value.startswith(b"text/event-stream")
            for name, value in start.get("headers", [])
        )
        if not message.get("more_body", False) or (
            streaming and shows_interrupted_task(b"".join(chunks))
        ):
            finished.set()

    headers = [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in sent.headers.items()
    ]
    headers.append((b"host", b"hub"))
    declares_length = any(name.lower() == "content-length" for name in sent.headers)
    if not declares_length and (sent.body or sent.verb in ("POST", "PUT")):
        headers.append((b"content-length", str(len(sent.body)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": sent.verb,
        "scheme": "http",
        "path": sent.path,
        "raw_path": quote(sent.path, safe="/:@!$&'()*+,;=").encode("ascii"),
        "query_string": sent.query,
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("hub", 80),
    }
    with anyio.fail_after(10):
        await app(scope, receive, send)  # type: ignore[arg-type]
    assert start, "the app returned without a response"
    reply_headers = {
        name.decode("latin-1").lower(): value.decode("latin-1")
        for name, value in start.get("headers", [])
    }
    return Reply(start["status"], reply_headers, b"".join(chunks))


def shows_interrupted_task(body: bytes) -> bool:
    """Whether an SSE body so far has an event with an input- or auth-required task (1.0 or
    0.3, JSON-RPC frame or bare REST event)."""
    end = body.rfind(b"\n\n")
    if end < 0:
        return False
    try:
        events = Reply(200, {}, body[:end]).events()
    except (AssertionError, ValueError):
        return False  # not SSE, or not well-formed: the checks after the exchange say so
    for item in events:
        payload = item.get("result", item) if isinstance(item, dict) else None
        if not isinstance(payload, dict):
            continue
        for holder in (payload, payload.get("task"), payload.get("statusUpdate")):
            status = holder.get("status") if isinstance(holder, dict) else None
            if isinstance(status, dict) and status.get("state") in INTERRUPTED:
                return True
    return False


def strict_json(data: bytes) -> Any:
    """JSON as RFC 8259 has it: UTF-8, no NaN or Infinity."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(data.decode("utf-8"), parse_constant=refuse)


# -- the hub under fuzz ------------------------------------------------------------------------


class Hub:
    """The app, two seeded tasks (one completed, one parked on a question) and their last
    known wire form."""

    def __init__(self, app: Litestar) -> None:
        self.app = app
        self.ids: dict[str, str] = {}
        self.snapshots: dict[str, Any] = {}

    async def rpc(self, method: str, params: Any) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": method, "params": params})
        reply = await exchange(self.app, Sent("POST", "/", b"", dict(V1_HEADERS), body.encode()))
        document = strict_json(reply.body)
        assert "result" in document, document
        return document["result"]

    async def seed(self) -> None:
        done = (await self.rpc("SendMessage", {"message": user_message("seed")}))["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        self.ids[COMPLETED], self.ids[CONTEXT] = done["id"], done["contextId"]
        await self.park()
        self.snapshots[COMPLETED] = await self.rpc("GetTask", {"id": done["id"]})

    async def park(self) -> None:
        params = {"message": user_message("start"), "metadata": {"skill": "interview"}}
        parked = (await self.rpc("SendMessage", params))["task"]
        assert parked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        self.ids[PARKED] = parked["id"]
        self.snapshots[PARKED] = await self.rpc("GetTask", {"id": parked["id"]})

    async def send(self, call: Call) -> tuple[Sent, Reply]:
        sent = render(call, self.ids)
        return sent, await exchange(self.app, sent)

    async def check_tasks(self, *, rejected: bool) -> None:
        """Neither seeded task changed if the request was rejected; the completed one never
        changes. A parked task that was answered or canceled is replaced by a new one."""
        completed = await self.rpc("GetTask", {"id": self.ids[COMPLETED]})
        assert completed == self.snapshots[COMPLETED]
        parked = await self.rpc("GetTask", {"id": self.ids[PARKED]})
        if rejected:
            assert parked == self.snapshots[PARKED]
            return
        if parked["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            await self.follow(self.ids[PARKED])  # an answer sent with returnImmediately
            parked = await self.rpc("GetTask", {"id": self.ids[PARKED]})
        self.snapshots[PARKED] = parked
        if parked["status"]["state"] != "TASK_STATE_INPUT_REQUIRED":
            await self.park()

    async def follow(self, task_id: str) -> None:
        """Wait, on a subscription, until the task is terminal or interrupted again."""
        body = {"jsonrpc": "2.0", "id": 0, "method": "SubscribeToTask", "params": {"id": task_id}}
        sent = Sent("POST", "/", b"", dict(V1_HEADERS), json.dumps(body).encode())
        await exchange(self.app, sent)


@pytest.fixture
async def seeded_hub(caplog: pytest.LogCaptureFixture) -> AsyncIterator[Hub]:
    caplog.set_level(logging.WARNING, logger="hub")
    app = create_app(hub_settings(), store=MemoryTaskStore(), skills=hub_skills())
    async with LifespanManager(app):
        served = Hub(app)
        await served.seed()
        yield served


def user_message(text: str) -> dict[str, Any]:
    return {"messageId": "m-seed", "role": "ROLE_USER", "parts": [{"text": text}]}


# -- the oracles -------------------------------------------------------------------------------


def assert_no_leak(text: Any, sent: Sent) -> None:
    assert isinstance(text, str)
    assert text.strip(), "an empty error message"
    for marker in LEAKS:
        if marker not in sent.text:  # an echo of the caller's own input is no leak
            assert marker not in text, text


def readable_request(sent: Sent) -> tuple[Any, bool]:
    """The JSON-RPC request document, if the server could read one (a POST of JSON within the
    body limit, UTF-8, no byte order mark), else None; and whether it holds a lone surrogate
    escape, which RFC 8259 §8.2 leaves to the receiver (rejecting the body is as fine as
    reading it)."""
    media_type = sent.headers.get("content-type", "").split(";")[0].strip().lower()
    if sent.verb != "POST" or len(sent.body) > MAX_BODY:
        return None, False
    declared = sent.headers.get("content-length", "0")
    if not (declared.isascii() and declared.isdigit() and int(declared) <= MAX_BODY):
        return None, False
    if media_type not in JSON_TYPES and not media_type.endswith("+json"):
        return None, False
    try:
        document = json.loads(sent.body.decode("utf-8"))
    except ValueError:
        return None, False
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return document, True
    return document, False


def is_rpc_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def assert_rpc_response(document: Any, sent: Sent, expected_ids: list[Any]) -> None:
    assert isinstance(document, dict), document
    assert document.get("jsonrpc") == "2.0", document
    assert "id" in document
    answered = document["id"]
    assert any(
        answered == expected and type(answered) is type(expected) for expected in expected_ids
    ), (answered, expected_ids)
    assert set(document) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), document
    if "result" in document:
        return
    error = document["error"]
    assert error["code"] in RPC_CODES, error
    assert_no_leak(error["message"], sent)
    if isinstance(error.get("data"), list):  # the 1.0 shape; 0.3's data is free-form
        assert error["data"][0]["@type"] == ERROR_INFO
        assert error["data"][0]["domain"] == "a2a-protocol.org"
        assert error["data"][0]["reason"]


def assert_jsonrpc_answer(sent: Sent, reply: Reply) -> bool:
    """The reply is a well-formed JSON-RPC answer; returns True when it is an error. Its
    HTTP status is 200, but for a stream that cannot start: that one fails as HTTP (4xx)."""
    request, ambiguous = readable_request(sent)
    request_object = request if isinstance(request, dict) else {}
    expected_ids = [request_object["id"]] if is_rpc_id(request_object.get("id")) else [None]
    notification = (
        request_object.get("jsonrpc") == "2.0"
        and isinstance(request_object.get("method"), str)
        and "id" not in request_object
    )
    if ambiguous:
        expected_ids.append(None)
        request_object = {}
    if reply.status == 204 or (notification and not ambiguous):
        # A request object without `id` gets no answer at all, whatever became of it.
        assert notification, (request, reply.status, reply.body)
        assert (reply.status, reply.body, reply.media_type) == (204, b"", ""), reply.headers
        event("JSON-RPC: notification")
        return False
    if reply.media_type == "text/event-stream":
        assert reply.status == 200, (reply.status, reply.body)
        frames = reply.events()
        assert frames, "a stream without events"
        for frame in frames:
            assert_rpc_response(frame, sent, expected_ids)
            assert "result" in frame
        event("JSON-RPC: stream")
        return False
    assert reply.media_type == "application/json", reply.headers
    document = strict_json(reply.body)
    assert_rpc_response(document, sent, expected_ids)
    method = request_object.get("method")
    if "error" not in document:
        assert reply.status == 200, (reply.status, reply.body)
        event("JSON-RPC: result")
        return False
    if reply.status != 200:
        assert method in STREAM_METHODS, (reply.status, method, document)
        assert 400 <= reply.status < 500, (reply.status, reply.body)
    event(f"JSON-RPC: error {document['error']['code']}")
    if request_object.get("jsonrpc") == "2.0" and method in (*V1_METHODS, *V03_METHODS):
        assert document["error"]["code"] != -32601, (method, document)
    return True


def assert_rest_answer(sent: Sent, reply: Reply) -> bool:
    """The reply is a success (JSON or SSE) or a google.rpc.Status error, never a 5xx;
    returns True when it is an error."""
    assert reply.status < 500, (reply.status, reply.body)
    if reply.status >= 400:
        assert reply.media_type == "application/json", reply.headers
        document = strict_json(reply.body)
        assert set(document) == {"error"}, document
        error = document["error"]
        assert error["code"] == reply.status
        assert isinstance(error["status"], str)
        assert error["status"]
        assert_no_leak(error["message"], sent)
        info = error["details"][0]
        assert info["@type"] == ERROR_INFO
        assert info["domain"] == "a2a-protocol.org"
        assert isinstance(info["reason"], str)
        assert info["reason"]
        assert all(isinstance(value, str) for value in info["metadata"].values())
        event(f"REST: {reply.status} {info['reason']}")
        return True
    if reply.status == 204:  # Litestar's automatic OPTIONS answer
        assert sent.verb == "OPTIONS"
        assert reply.body == b""
        return False
    assert reply.status == 200, (reply.status, reply.body)
    if reply.media_type == "text/event-stream":
        items = reply.events()
        assert items, "a stream without events"
        for item in items:
            assert isinstance(item, dict)
            assert len(item) == 1
            assert set(item) <= STREAM_KEYS, item
        event("REST: 200 stream")
        return False
    assert reply.media_type == "application/json", reply.headers
    document = strict_json(reply.body)
    assert isinstance(document, dict)
    if "jsonrpc" in document:  # a path Litestar normalises to "/" reached JSON-RPC
        event("REST: reached JSON-RPC")
        return "error" in document
    event("REST: 200")
    return False


# -- strategies: values --------------------------------------------------------------------------

FIELD_NAMES = (
    "id",
    "jsonrpc",
    "method",
    "params",
    "message",
    "messageId",
    "taskId",
    "contextId",
    "role",
    "parts",
    "text",
    "raw",
    "url",
    "data",
    "kind",
    "file",
    "bytes",
    "uri",
    "metadata",
    "skill",
    "tenant",
    "configuration",
    "historyLength",
    "returnImmediately",
    "blocking",
    "pageSize",
    "pageToken",
    "status",
    "state",
    "taskPushNotificationConfig",
    "pushNotificationConfig",
)
WORDS = (
    "ROLE_USER",
    "ROLE_AGENT",
    "ROLE_UNSPECIFIED",
    "role_user",
    "user",
    "agent",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_BOGUS",
    "completed",
    "input-required",
    "text",
    "file",
    "data",
    "message",
    "task",
    "interview",
    "echo",
    "2.0",
    "1.0",
    "2020-01-01T00:00:00Z",
    "not-a-time",
    "https://hooks.example.invalid/hook",
    "aGk=",
    "@@@",
)
SCALARS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31,
    2**63,
    -(2**63),
    10**30,
    -(10**30),
    1.5,
    -0.0,
    1e308,
    "",
    " ",
    "0",
    "true",
    "null",
    "\x00",
    "\ud800",
    "é",
    "😀",
    "\u2028",
    [],
    {},
    [None],
    {"": None},
)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked in proportion to its weight (the first shrinks best)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(min_value=0, max_value=len(pool) - 1).flatmap(lambda index: pool[index])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)
# Long strings, most of them within the body limit once encoded, some beyond it.
huge_strings = st.builds(
    lambda unit, size: unit * size,
    st.sampled_from(["x", "é", "😀", "\\", '"']),
    st.integers(min_value=200, max_value=800),
)
odd_values = st.one_of(
    st.sampled_from(SCALARS).map(copy.deepcopy),  # never share a mutable value
    st.sampled_from(WORDS),
    st.sampled_from((*V1_METHODS, *V03_METHODS, *PLACEHOLDERS)),
    huge_strings,
    st.text(max_size=30),
    json_values,
)
field_names = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=8))
# Ids that reach the seeded tasks, an id that exists nowhere, and junk.
any_task = weighted(
    (3, st.sampled_from((COMPLETED, PARKED))),
    (1, st.just("missing")),
    (1, st.text(min_size=1, max_size=12)),
)
seeded_task = st.sampled_from((COMPLETED, PARKED))


# -- strategies: request documents -------------------------------------------------------------


def v1_message(task: str | None, context: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": "m-1",
        "role": "ROLE_USER",
        "parts": [
            {"text": "hi"},
            {"data": {"k": [1, "two"]}, "mediaType": "application/json"},
            {"url": "https://example.com/a.txt", "filename": "a.txt"},
            {"raw": "aGk=", "mediaType": "text/plain"},
        ],
        "metadata": {"note": "fuzz"},
    }
    if task is not None:
        message["taskId"] = task
    if context is not None:
        message["contextId"] = context
    return message


def v1_send(
    task: str | None, *, context: str | None = None, skill: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "message": v1_message(task, context),
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "historyLength": 3,
            "returnImmediately": False,
        },
        "metadata": {"skill": skill} if skill else {},
    }
    return params


def v03_send(task: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [
            {"kind": "text", "text": "hi"},
            {"kind": "data", "data": {"k": 1}},
            {"kind": "file", "file": {"uri": "https://example.com/a", "mimeType": "text/plain"}},
            {"kind": "file", "file": {"bytes": "aGk=", "name": "a.txt"}},
        ],
    }
    if task is not None:
        message["taskId"] = task
    configuration = {"blocking": True, "historyLength": 2, "acceptedOutputModes": ["text/plain"]}
    return {"message": message, "configuration": configuration, "metadata": {}}


Template = Callable[[str], Any]
# Valid params for every method, given a task id (None: no params member at all). Streams
# only ever start echo tasks: a parked stream stays open.
TEMPLATES: tuple[tuple[str, Template], ...] = (
    ("SendMessage", lambda task: v1_send(None)),
    ("SendMessage", lambda task: v1_send(task)),
    ("SendMessage", lambda task: v1_send(task, context=CONTEXT)),
    ("SendMessage", lambda task: v1_send(None, skill="interview")),
    ("SendStreamingMessage", lambda task: v1_send(None)),
    ("SendStreamingMessage", lambda task: v1_send(task)),
    ("GetTask", lambda task: {"id": task, "historyLength": 2}),
    (
        "ListTasks",
        lambda task: {
            "contextId": CONTEXT,
            "status": "TASK_STATE_COMPLETED",
            "pageSize": 5,
            "pageToken": "",
            "historyLength": 1,
            "statusTimestampAfter": "2020-01-01T00:00:00Z",
            "includeArtifacts": True,
        },
    ),
    ("ListTasks", lambda task: None),
    ("CancelTask", lambda task: {"id": task, "metadata": {"why": "fuzz"}}),
    ("SubscribeToTask", lambda task: {"id": task}),
    (
        "CreateTaskPushNotificationConfig",
        lambda task: {
            "taskId": task,
            "url": "https://hooks.example.invalid/hook",
            "token": "t",
            "authentication": {"scheme": "Bearer", "credentials": "c"},
        },
    ),
    ("GetTaskPushNotificationConfig", lambda task: {"taskId": task, "id": "c1"}),
    ("ListTaskPushNotificationConfigs", lambda task: {"taskId": task, "pageSize": 5}),
    ("DeleteTaskPushNotificationConfig", lambda task: {"taskId": task, "id": "c1"}),
    ("GetExtendedAgentCard", lambda task: {"tenant": ""}),
    ("GetExtendedAgentCard", lambda task: None),
    ("message/send", lambda task: v03_send(None)),
    ("message/send", lambda task: v03_send(task)),
    ("message/stream", lambda task: v03_send(None)),
    ("message/stream", lambda task: v03_send(task)),
    ("tasks/get", lambda task: {"id": task, "historyLength": 2}),
    ("tasks/cancel", lambda task: {"id": task, "metadata": {}}),
    ("tasks/resubscribe", lambda task: {"id": task}),
    (
        "tasks/pushNotificationConfig/set",
        lambda task: {
            "taskId": task,
            "pushNotificationConfig": {
                "url": "https://hooks.example.invalid/hook",
                "authentication": {"schemes": ["Bearer"]},
            },
        },
    ),
    (
        "tasks/pushNotificationConfig/get",
        lambda task: {"id": task, "pushNotificationConfigId": "c"},
    ),
    ("tasks/pushNotificationConfig/list", lambda task: {"id": task}),
    (
        "tasks/pushNotificationConfig/delete",
        lambda task: {"id": task, "pushNotificationConfigId": "c"},
    ),
    ("agent/getAuthenticatedExtendedCard", lambda task: None),
)


# The templates whose request names a task.
TASK_TEMPLATES = tuple(
    (method, template)
    for method, template in TEMPLATES
    if "@@probe@@" in json.dumps(template("@@probe@@"))
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found.extend(_paths(child, (*prefix, key)))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found.extend(_paths(child, (*prefix, index)))
    return found


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def mutated(draw: st.DrawFn, document: Any, most: int = 3) -> Any:
    """`document` with up to `most` fields, at any depth, dropped, replaced (retyped, huge,
    unicode, wrong enum values, other methods, real task ids) or added."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(min_value=0, max_value=most))):
        path = draw(st.sampled_from(_paths(document)))
        node = _at(document, path)
        operation = draw(st.sampled_from(("replace", "drop", "add")))
        if operation == "drop" and path:
            del _at(document, path[:-1])[path[-1]]
        elif operation == "add" and isinstance(node, dict):
            node[draw(field_names)] = draw(odd_values)
        elif operation == "add" and isinstance(node, list):
            repeat = bool(node) and draw(st.booleans())
            node.append(copy.deepcopy(node[0]) if repeat else draw(odd_values))
        elif path:
            _at(document, path[:-1])[path[-1]] = draw(odd_values)
        else:
            document = draw(odd_values)
    return document


@st.composite
def encoded(draw: st.DrawFn, document: Any) -> Doc:
    damage = draw(weighted((9, st.just("")), (1, st.sampled_from(("bom", "utf-16", "cut")))))
    return Doc(document, ascii=draw(st.booleans()), damage=damage)


def headers_for(version: str | None) -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    """Mostly the right A2A-Version and a JSON Content-Type; otherwise any mix of missing,
    wrong and garbage values, and now and then a malformed or oversized Content-Length (a
    well-formed one that lies means nothing in process: the whole body is delivered)."""
    header_text = st.text(
        alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
        max_size=20,
    )
    versions = st.one_of(
        st.none(),
        st.sampled_from(("1.0", "0.3", "1.0.7", " 1.0 ", "2.0", "1", "", "1.0, 0.3", "v1")),
        header_text,
    )
    content_types = st.one_of(
        st.none(),
        st.sampled_from(
            (
                "application/json",
                "application/a2a+json",
                "application/json; charset=utf-8",
                "APPLICATION/JSON",
                "application/vnd.example+json",
                "text/plain",
                "application/x-www-form-urlencoded",
                "text/event-stream",
                "",
            )
        ),
        header_text,
    )

    content_lengths = st.one_of(
        st.sampled_from(("²", "abc", "", "-1", " 12", "1e3", "0x10", "99999999")),
        header_text.filter(lambda value: not (value.isascii() and value.isdigit())),
    )

    @st.composite
    def build(draw: st.DrawFn) -> tuple[tuple[str, str], ...]:
        content_type: str | None
        if draw(weighted((3, st.just(True)), (1, st.just(False)))):
            chosen_version, content_type = version, "application/json"
        else:
            chosen_version, content_type = draw(versions), draw(content_types)
        headers = []
        if chosen_version is not None:
            headers.append(("A2A-Version", chosen_version))
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        if draw(weighted((9, st.just(False)), (1, st.just(True)))):
            headers.append(("Content-Length", draw(content_lengths)))
        return tuple(headers)

    return build()


rpc_verbs = weighted((9, st.just("POST")), (1, st.sampled_from(("GET", "PUT", "DELETE"))))
rpc_queries = st.one_of(
    st.just(()),
    st.just(()),
    st.sampled_from(("1.0", "0.3", "9.9", "")).map(lambda value: (("A2A-Version", value),)),
)


@st.composite
def mutated_rpc_calls(
    draw: st.DrawFn,
    targets: st.SearchStrategy[str],
    templates: tuple[tuple[str, Template], ...] = TEMPLATES,
    most: int = 3,
) -> Call:
    method, template = draw(st.sampled_from(templates))
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(rpc_ids), "method": method}
    params = template(draw(targets))
    if params is not None:
        envelope["params"] = params
    document = draw(mutated(envelope, most))
    version = "1.0" if method in V1_METHODS else draw(st.sampled_from((None, "0.3")))
    return Call(
        verb=draw(rpc_verbs),
        path="/",
        query=draw(rpc_queries),
        headers=draw(headers_for(version)),
        body=draw(encoded(document)),
    )


rpc_ids = weighted(
    (4, st.integers()),
    (4, st.text(max_size=10)),
    (1, st.none()),
    (1, st.sampled_from((True, False, 1.0, 1.5, -0.0, {}, [], {"id": 1}, [1], 2**70))),
)
any_rpc_calls = weighted(
    (6, mutated_rpc_calls(any_task)),
    (
        1,
        st.builds(
            Call,
            verb=rpc_verbs,
            path=st.just("/"),
            headers=headers_for("1.0"),
            body=st.binary(max_size=300),
        ),
    ),
    (
        1,
        st.builds(
            Call,
            verb=rpc_verbs,
            path=st.just("/"),
            headers=headers_for("1.0"),
            body=json_values.flatmap(encoded),
        ),
    ),
)


# -- strategies: REST ----------------------------------------------------------------------------

QUERY_KEYS = (
    "pageSize",
    "historyLength",
    "status",
    "includeArtifacts",
    "statusTimestampAfter",
    "contextId",
    "pageToken",
    "A2A-Version",
)
QUERY_VALUES = (
    "0",
    "1",
    "-1",
    "100",
    "101",
    "99999999999999999999999",
    "1.5",
    "1e3",
    "true",
    "false",
    "TRUE",
    "yes",
    "",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_UNSPECIFIED",
    "completed",
    "2020-01-01T00:00:00Z",
    "2020-13-45T99:00:00Z",
    "9999-12-31T23:59:59Z",
    "0001-01-01",
    "1.0",
    CONTEXT,
)
query_values = weighted(
    (3, st.sampled_from(QUERY_VALUES)),
    (1, st.integers().map(str)),
    (1, st.text(max_size=12)),
)


@st.composite
def known_params(draw: st.DrawFn) -> tuple[tuple[str, str], ...]:
    """Each known parameter present one time in three, with a valid or a wrong value."""
    return tuple(
        (key, draw(query_values))
        for key in QUERY_KEYS
        if draw(weighted((2, st.just(False)), (1, st.just(True))))
    )


# Mostly the known parameters, each at most once; sometimes repeats, unknown names, raw junk.
rest_queries = weighted(
    (1, st.just(())),
    (4, known_params()),
    (
        1,
        st.lists(
            st.tuples(st.one_of(st.sampled_from(QUERY_KEYS), st.text(max_size=6)), query_values),
            max_size=4,
        ).map(tuple),
    ),
    (
        1,
        st.text(
            alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="#"),
            max_size=20,
        ),
    ),
)
path_text = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12
)


def rest_routes(targets: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str, bool]]:
    """(verb, path, takes a message body) for every route, a verb suffix that does not exist,
    a tenant prefix and garbage paths."""

    def on_task(verb: str, suffix: str) -> st.SearchStrategy[tuple[str, str, bool]]:
        return targets.map(lambda task: (verb, f"/tasks/{task}{suffix}", False))

    return weighted(
        (4, st.just(("POST", "/message:send", True))),
        (3, st.just(("POST", "/message:stream", True))),
        (5, st.just(("GET", "/tasks", False))),
        (3, on_task("GET", "")),
        (3, on_task("POST", ":cancel")),
        (1, on_task("GET", ":subscribe")),
        (1, on_task("POST", ":subscribe")),
        (1, on_task("POST", "/pushNotificationConfigs")),
        (1, on_task("GET", "/pushNotificationConfigs")),
        (1, on_task("GET", "/pushNotificationConfigs/c1")),
        (1, on_task("DELETE", "/pushNotificationConfigs/c1")),
        (
            1,
            st.sampled_from(
                (
                    ("GET", "/extendedAgentCard", False),
                    ("GET", "/.well-known/agent-card.json", False),
                    ("GET", "/healthz", False),
                    ("POST", "/t1/message:send", True),
                    ("GET", "/t1/tasks", False),
                )
            ),
        ),
        (
            1,
            st.tuples(st.just("POST"), targets, path_text).map(
                lambda parts: (parts[0], f"/tasks/{parts[1]}:{parts[2]}", False)
            ),
        ),
        (
            1,
            st.tuples(st.just("GET"), path_text).map(
                lambda parts: (parts[0], f"/{parts[1]}", False)
            ),
        ),
    )


@st.composite
def rest_calls(draw: st.DrawFn, targets: st.SearchStrategy[str]) -> Call:
    verb, path, takes_message = draw(rest_routes(targets))
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        verb = draw(st.sampled_from(("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")))
    if takes_message:
        task, context = draw(st.none() | targets), draw(st.none() | st.just(CONTEXT))
        body: bytes | Doc = draw(encoded(draw(mutated(v1_send(task, context=context)))))
    else:
        body = draw(
            st.one_of(
                st.just(b""),
                st.just(b""),
                st.binary(max_size=100),
                json_values.flatmap(encoded),
                st.just(Doc({"metadata": {"why": "fuzz"}})),
            )
        )
    return Call(
        verb=verb,
        path=path,
        query=draw(rest_queries),
        headers=draw(headers_for("1.0")),
        body=body,
    )


# -- the tests -----------------------------------------------------------------------------------


def assert_no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    """An unexpected exception is logged at ERROR by the server: a 500 in disguise."""
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [record.getMessage() for record in errors]


@pytest.mark.slow
@FUZZ
@given(call=any_rpc_calls)
# Found by this test: each of these was answered -32601 "method does not exist".
@example(
    call=Call("POST", "/", (), V1_HEADERS, Doc({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}))
)
@example(
    call=Call(
        "POST",
        "/",
        (),
        V1_HEADERS,
        Doc({"jsonrpc": "2.0", "id": 2, "method": "GetExtendedAgentCard"}),
    )
)
@example(
    call=Call(
        "POST",
        "/",
        (),
        V1_HEADERS,
        Doc({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": "x"}}, damage="bom"),
    )
)
@example(
    call=Call(
        "POST",
        "/",
        (),
        V1_HEADERS,
        Doc({"jsonrpc": "2.0", "id": "\ud800", "method": "GetTask", "params": {"id": "x"}}),
    )
)
async def test_every_jsonrpc_request_gets_a_well_formed_answer(
    seeded_hub: Hub, caplog: pytest.LogCaptureFixture, call: Call
) -> None:
    caplog.clear()
    sent, reply = await seeded_hub.send(call)
    rejected = assert_jsonrpc_answer(sent, reply)
    await seeded_hub.check_tasks(rejected=rejected)
    assert_no_errors_logged(caplog)


@pytest.mark.slow
@FUZZ
@given(call=rest_calls(any_task))
async def test_every_rest_request_gets_a_status_shaped_answer_and_never_a_5xx(
    seeded_hub: Hub, caplog: pytest.LogCaptureFixture, call: Call
) -> None:
    caplog.clear()
    sent, reply = await seeded_hub.send(call)
    rejected = assert_rest_answer(sent, reply)
    await seeded_hub.check_tasks(rejected=rejected)
    assert_no_errors_logged(caplog)


@pytest.mark.slow
@FUZZ
@given(
    call=weighted(
        (2, mutated_rpc_calls(seeded_task, TASK_TEMPLATES, most=2)),
        (1, rest_calls(seeded_task)),
    ),
)
async def test_rejected_requests_aimed_at_real_tasks_change_nothing(
    seeded_hub: Hub, caplog: pytest.LogCaptureFixture, call: Call
) -> None:
    caplog.clear()
    sent, reply = await seeded_hub.send(call)
    if call.path == "/":
        rejected = assert_jsonrpc_answer(sent, reply)
    else:
        rejected = assert_rest_answer(sent, reply)
    await seeded_hub.check_tasks(rejected=rejected)
    assert_no_errors_logged(caplog)


async def post_jsonrpc(seeded_hub: Hub, body: bytes) -> Any:
    reply = await exchange(seeded_hub.app, Sent("POST", "/", b"", dict(V1_HEADERS), body))
    assert reply.status == 200
    return strict_json(reply.body)


async def test_a_v1_call_may_omit_params(seeded_hub: Hub) -> None:
    listed = await post_jsonrpc(seeded_hub, b'{"jsonrpc":"2.0","id":1,"method":"ListTasks"}')
    assert listed["id"] == 1
    assert listed["result"]["totalSize"] == 2
    card = await post_jsonrpc(
        seeded_hub, b'{"jsonrpc":"2.0","id":2,"method":"GetExtendedAgentCard"}'
    )
    assert card["error"]["code"] == -32004
    task = await post_jsonrpc(seeded_hub, b'{"jsonrpc":"2.0","id":3,"method":"GetTask"}')
    assert task["error"]["code"] == -32602


@pytest.mark.parametrize(
    "body",
    [
        b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}',
        '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}'.encode("utf-16"),
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"GetTask","params":{"id":"x"}}',
    ],
    ids=["utf-8 with a byte order mark", "utf-16", "lone surrogate escape"],
)
async def test_a_body_that_is_not_plain_utf8_json_is_a_parse_error(
    seeded_hub: Hub, body: bytes
) -> None:
    document = await post_jsonrpc(seeded_hub, body)
    assert document["id"] is None
    assert document["error"]["code"] == -32700


@pytest.mark.parametrize("length", ["²", "abc", "-1"])
async def test_a_malformed_content_length_is_an_invalid_request_on_both_bindings(
    seeded_hub: Hub, length: str
) -> None:
    headers = {**dict(V1_HEADERS), "Content-Length": length}
    body = b'{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}'
    rpc = await exchange(seeded_hub.app, Sent("POST", "/", b"", headers, body))
    assert strict_json(rpc.body)["error"]["code"] == -32600
    send_body = json.dumps({"message": user_message("hi")}).encode()
    rest = await exchange(seeded_hub.app, Sent("POST", "/message:send", b"", headers, send_body))
    assert rest.status == 400
    assert strict_json(rest.body)["error"]["details"][0]["reason"] == "INVALID_REQUEST"
