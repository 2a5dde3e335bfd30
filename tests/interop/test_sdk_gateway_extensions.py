"""A2A extensions through the gateway, between official a2a-sdk clients and partners: the
caller's `A2A-Extensions` list (0.3: `X-A2A-Extensions`) reaches the partner under the name
of the version the hub speaks to it, on both client bindings, and the partner's activation
header comes back under the caller's version's name, for unary calls and streams. The hub's
own extensions stay its own: its required ones do not apply to `/agents/{name}`, and a
skill's call to a partner does not pass on the extensions its caller listed.

a2a-sdk 1.3 reads the requested extensions (`RequestContext.requested_extensions`) but has
no way to answer with the activated ones, so each partner's app is wrapped in a few lines of
ASGI that activate the extension its card declares when a request lists it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import httpx
import pytest
from a2a.client.client import ClientCallContext
from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.types import GetTaskRequest, TaskState
from a2a.types.a2a_pb2 import AgentExtension, AgentSkill
from a2a.utils.errors import TaskNotFoundError
from litestar import Litestar
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from hub.app import create_app
from hub.config import (
    CardSettings,
    GrpcSettings,
    LimitSettings,
    ServerSettings,
    Settings,
    StoreSettings,
)
from hub.partners import Partners
from hub.registry import AgentEntry, Registry
from hub.skills import SkillContext, skill
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from hub.testing.loopback import reserved_port
from tests.client.partners import EchoOrWaitExecutor
from tests.interop.grpc_clients import raw_stub
from tests.interop.test_sdk_client import BINDINGS, collect, final_task_state, sdk_client, user
from tests.interop.test_sdk_grpc import V1
from tests.sdk_agents import sdk_agent

pytestmark = pytest.mark.anyio

TAG = "https://example.com/extensions/tag/v1"
"""Declared and activated by every partner."""
OTHER = "https://example.com/extensions/other/v1"
"""Known to no one: the partner sees it listed and does not activate it."""
HUB_ONLY = "https://example.com/extensions/hub-only/v1"
"""Required by the hub of its own endpoints."""

_LINES = (b"a2a-extensions", b"x-a2a-extensions")
PARTNER_SHAPES = {
    "one": ("JSONRPC", "1.0"),
    "old": ("JSONRPC", "0.3"),
    "rest": ("HTTP+JSON", "1.0"),
}


class RecordingExecutor(EchoOrWaitExecutor):
    """Echoes, keeping the extensions the SDK says each message's request listed."""

    def __init__(self) -> None:
        self.requested: list[set[str]] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.requested.append(set(context.requested_extensions))
        await super().execute(context, event_queue)


@dataclass(eq=False)
class ActivatingPartner:
    """The SDK's app behind an activation of `TAG`: keeps the extension header lines of each
    A2A request (the card's reads aside), and when one lists `TAG`, answers with it under the
    name the request used."""

    app: ASGIApp
    executor: RecordingExecutor
    lines: list[dict[str, str]] = field(default_factory=list)

    def reset(self) -> None:
        self.lines.clear()
        self.executor.requested.clear()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/.well-known/"):
            await self.app(scope, receive, send)
            return
        lines = {
            name.decode(): value.decode() for name, value in scope["headers"] if name in _LINES
        }
        self.lines.append(lines)
        listed = {uri.strip() for value in lines.values() for uri in value.split(",")}
        name = b"a2a-extensions" if "a2a-extensions" in lines else b"x-a2a-extensions"

        async def activating(message: Message) -> None:
            if message["type"] == "http.response.start" and TAG in listed:
                message = {**message, "headers": [*message["headers"], (name, TAG.encode())]}
            await send(message)

        await self.app(scope, receive, activating)


@skill(id="relay", description="asks partner 'one' and returns its answer")
async def relay(ctx: SkillContext) -> str:
    result = await ctx.agents["one"].call(message=ctx.text)
    return f"one said: {result.text}"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """One event loop for the module, so the partners and the hub start once."""
    return "asyncio"


@dataclass(frozen=True)
class Bed:
    hub_url: str
    grpc_address: str
    partners: dict[str, ActivatingPartner]


@pytest.fixture(scope="module")
async def running_bed() -> AsyncIterator[Bed]:
    """Three SDK partners declaring `TAG` (1.0 JSON-RPC, 0.3 JSON-RPC, 1.0 HTTP+JSON) and a
    hub naming them, which declares `TAG` and requires `HUB_ONLY` of its own endpoints, with
    its gRPC door on."""
    async with AsyncExitStack() as stack:
        partners: dict[str, ActivatingPartner] = {}
        urls: dict[str, str] = {}
        for name, (binding, version) in PARTNER_SHAPES.items():

            def build(
                url: str, name: str = name, binding: str = binding, version: str = version
            ) -> ActivatingPartner:
                executor = RecordingExecutor()
                app = sdk_agent(
                    url,
                    executor,
                    name=f"tagging-{binding.lower()}-{version}",
                    description="an a2a-sdk partner that activates the tag extension",
                    skill=AgentSkill(id="echo", name="Echo", description="echoes", tags=["e"]),
                    binding=binding,
                    version=version,
                    extensions=[AgentExtension(uri=TAG, description="tags the answer")],
                )
                partners[name] = ActivatingPartner(app=app, executor=executor)
                return partners[name]

            urls[name] = await stack.enter_async_context(serve_on_loopback(build))

        grpc_port = stack.enter_context(reserved_port())

        def build_hub(url: str) -> Litestar:
            door = GrpcSettings(enabled=True, host="127.0.0.1", port=grpc_port)
            settings = Settings(
                server=ServerSettings(public_url=url, grpc=door),
                store=StoreSettings(kind="memory"),
                limits=LimitSettings(requests_per_second=0),
                default_skill="relay",
                card=CardSettings.model_validate(
                    {"extensions": [{"uri": HUB_ONLY, "required": True}, {"uri": TAG}]}
                ),
            )
            entries = [AgentEntry(name=name, url=url) for name, url in urls.items()]
            return create_app(
                settings,
                store=MemoryTaskStore(),
                skills={"relay": relay},
                partners=Partners(Registry(entries)),
            )

        hub_url = await stack.enter_async_context(serve_on_loopback(build_hub))
        yield Bed(hub_url=hub_url, grpc_address=f"127.0.0.1:{grpc_port}", partners=partners)


@pytest.fixture
def bed(running_bed: Bed) -> Bed:
    for partner in running_bed.partners.values():
        partner.reset()
    return running_bed


@pytest.fixture(params=list(BINDINGS))
def caller(request: pytest.FixtureRequest) -> str:
    """How the SDK client talks to the gateway."""
    return str(request.param)


@pytest.fixture(params=list(PARTNER_SHAPES))
def partner(request: pytest.FixtureRequest) -> str:
    """Which partner it reaches."""
    return str(request.param)


def _extension_lines(response: httpx.Response) -> dict[str, str]:
    return {
        name: response.headers[name]
        for name in ("a2a-extensions", "x-a2a-extensions")
        if name in response.headers
    }


async def test_the_partner_sees_the_callers_extensions_and_its_activation_comes_back(
    bed: Bed, caller: str, partner: str
) -> None:
    answers: list[dict[str, str]] = []

    async def keep(response: httpx.Response) -> None:
        if any(name in response.request.headers for name in ("a2a-extensions", "x-a2a-extensions")):
            answers.append(_extension_lines(response))

    listed = ClientCallContext(service_parameters={"A2A-Extensions": f"{TAG},{OTHER}"})
    url = f"{bed.hub_url}/agents/{partner}"
    async with sdk_client(url, caller, on_response=keep) as client:
        streamed = await collect(client.send_message(user("streamed"), context=listed))
        task = await client.get_task(GetTaskRequest(id=streamed[0].task.id), context=listed)
    async with sdk_client(url, caller, streaming=False, on_response=keep) as client:
        unary = await collect(client.send_message(user("unary"), context=listed))

    # Served though the caller did not list HUB_ONLY: the hub's own rule stops at its routes.
    assert final_task_state(streamed) == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert final_task_state(unary) == TaskState.TASK_STATE_COMPLETED
    # Send (stream), GetTask, send (unary): each reached the partner with the caller's list,
    # under the name of the version the hub speaks to it, and nothing else.
    to_partner = "x-a2a-extensions" if partner == "old" else "a2a-extensions"
    seen = bed.partners[partner]
    assert [sorted(lines) for lines in seen.lines] == [[to_partner]] * 3
    assert [set(lines[to_partner].split(",")) for lines in seen.lines] == [{TAG, OTHER}] * 3
    assert seen.executor.requested == [{TAG, OTHER}] * 2
    # Each answer the caller got names the one the partner activated, in the caller's version.
    to_caller = "x-a2a-extensions" if caller == "jsonrpc-0.3" else "a2a-extensions"
    assert answers == [{to_caller: TAG}] * 3


async def test_a_refusal_of_the_partner_carries_its_activation_back(bed: Bed, partner: str) -> None:
    answers: list[dict[str, str]] = []

    async def keep(response: httpx.Response) -> None:
        if "a2a-extensions" in response.request.headers:
            answers.append(_extension_lines(response))

    listed = ClientCallContext(service_parameters={"A2A-Extensions": TAG})
    url = f"{bed.hub_url}/agents/{partner}"
    async with sdk_client(url, "rest-1.0", on_response=keep) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"), context=listed)
    assert len(bed.partners[partner].lines) == 1
    assert answers == [{"a2a-extensions": TAG}]


async def test_a_call_without_extensions_sends_and_gets_none(bed: Bed, partner: str) -> None:
    answers: list[dict[str, str]] = []

    async def keep(response: httpx.Response) -> None:
        answers.append(_extension_lines(response))

    async with sdk_client(
        f"{bed.hub_url}/agents/{partner}", "jsonrpc-1.0", on_response=keep
    ) as client:
        events = await collect(client.send_message(user("plain")))
    assert final_task_state(events) == TaskState.TASK_STATE_COMPLETED
    assert bed.partners[partner].lines == [{}]
    assert bed.partners[partner].executor.requested == [set()]
    assert all(lines == {} for lines in answers)


async def test_a_skills_partner_call_does_not_pass_on_its_callers_extensions(bed: Bed) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        },
    }
    headers = {"A2A-Version": "1.0", "A2A-Extensions": f"{HUB_ONLY},{TAG},{OTHER}"}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(bed.hub_url + "/", json=body, headers=headers)
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "one said: hi"}]
    # The hub activated its own two; the partner the skill called heard of none.
    assert response.headers["A2A-Extensions"] == f"{HUB_ONLY},{TAG}"
    assert bed.partners["one"].lines == [{}]
    assert bed.partners["one"].executor.requested == [set()]


async def test_over_grpc_the_partner_sees_the_extensions_and_its_activation_comes_back(
    bed: Bed, partner: str
) -> None:
    listed = (*V1, ("a2a-extensions", f"{TAG},{OTHER}"))
    request = user("grpc")
    request.tenant = f"agents/{partner}"
    async with raw_stub(bed.grpc_address) as stub:
        streaming = stub.SendStreamingMessage(request, metadata=listed)
        streamed = [event async for event in streaming]
        unary = stub.SendMessage(request, metadata=listed)
        answer = await unary
        answered = [dict(await streaming.initial_metadata()), dict(await unary.initial_metadata())]
    # Served though the caller did not list HUB_ONLY: the hub's own rule stops at its routes.
    assert streamed[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED
    to_partner = "x-a2a-extensions" if partner == "old" else "a2a-extensions"
    seen = bed.partners[partner]
    assert [set(lines[to_partner].split(",")) for lines in seen.lines] == [{TAG, OTHER}] * 2
    assert seen.executor.requested == [{TAG, OTHER}] * 2
    assert [lines.get("a2a-extensions") for lines in answered] == [TAG, TAG]
