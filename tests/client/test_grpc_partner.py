"""A partner that speaks only gRPC (the official a2a-sdk 1.3's gRPC server, its card over
HTTP), called directly and through a hub's skills: a question and its answer, a stream cut
mid-way and resumed, and `call`, `delegate`, a swarm and a cancel through the hub, as with
any HTTP partner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.helpers.proto_helpers import new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from litestar import Litestar

from hub.app import create_app
from hub.client import A2AClient, ResumePolicy, user_message
from hub.config import ServerSettings, Settings, StoreSettings
from hub.errors import (
    AgentUnreachableError,
    ClientError,
    ConnectionLostError,
    RemoteRpcError,
)
from hub.partners import Partners
from hub.protocol import StreamResponse, Task, TaskPushNotificationConfig, TaskState
from hub.registry import load_registry
from hub.skills import SkillContext, skill
from hub.skills.delegate import delegate
from hub.skills.swarm import swarm
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import (
    ECHO,
    WAIT,
    EchoOrWaitExecutor,
    delegated_wait,
    final_state,
    streamed_texts,
)
from tests.multiturn.partners import QUESTION, AskingExecutor, greet
from tests.sdk_agents import GrpcAgent, open_task, sdk_grpc_agent
from tests.trust.pki import private_pki

pytestmark = pytest.mark.anyio

FAST = ResumePolicy(attempts=5, base_delay=0.05, max_delay=0.2)


class Chunks(AgentExecutor):
    """Streams `one `, waits to be let go (`go`), then `two` and completes."""

    def __init__(self) -> None:
        self.first_sent = anyio.Event()
        self.go = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater, _ = await open_task(context, event_queue)
        await updater.start_work()
        await updater.add_artifact([new_text_part("one ")], artifact_id="a1", name="text")
        self.first_sent.set()
        await self.go.wait()
        await updater.add_artifact(
            [new_text_part("two")], artifact_id="a1", name="text", append=True, last_chunk=True
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def _grpc(executor: AgentExecutor, name: str) -> AsyncIterator[GrpcAgent]:
    return sdk_grpc_agent(executor, name=name, description=f"{name} over gRPC", skill=ECHO)


def _text(task: Task) -> str:
    return "".join(p.text or "" for a in task.artifacts or [] for p in a.parts)


async def test_a_question_over_grpc_is_answered_in_a_follow_up(http: httpx.AsyncClient) -> None:
    async with _grpc(AskingExecutor("status"), "greeter") as agent:
        client = await A2AClient.from_url(agent.url, http=http)
        try:
            with anyio.fail_after(15):
                asked = await client.send(user_message("hi"))
                assert isinstance(asked, Task)
                follow_up = user_message("Ada", task_id=asked.id, context_id=asked.context_id)
                async with client.stream(follow_up) as events:
                    seen = [event async for event in events]
        finally:
            await client.aclose()

    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert asked.status.message.text() == QUESTION
    assert final_state(seen) is TaskState.COMPLETED
    assert streamed_texts(seen) == [greet("Ada")]


async def test_a_stream_cut_when_the_server_stops_is_resumed_without_a_loss_or_a_repeat(
    http: httpx.AsyncClient,
) -> None:
    executor = Chunks()
    async with _grpc(executor, "chunks") as agent:
        client = await A2AClient.from_url(agent.url, http=http, resume=FAST)
        seen: list[StreamResponse] = []
        try:
            with anyio.fail_after(20):
                async with client.stream(user_message("go")) as events:
                    async for event in events:
                        seen.append(event)
                        if event.artifact_update is not None and not executor.go.is_set():
                            await agent.cut()  # every call on the server broken, the task runs
                            executor.go.set()
        finally:
            await client.aclose()

    assert "".join(streamed_texts(seen)) == "one two"
    assert final_state(seen) is TaskState.COMPLETED
    assert client.breaker.snapshot().consecutive_failures == 0


@skill(id="caller", description="calls the echoer with the message's text")
async def caller(ctx: SkillContext) -> str:
    result = await ctx.agents["echoer"].call(message=ctx.text)
    return f"echoer said: {result.text}"


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[tuple[A2AClient, GrpcAgent]]:
    """A hub whose partners speak only gRPC: `echoer` (`binding: grpc` in agents.yaml),
    `twin` (the same, chosen from its card) and `greeter`, which asks a question."""
    async with (
        _grpc(EchoOrWaitExecutor(), "echoer") as echoer,
        _grpc(EchoOrWaitExecutor(), "twin") as twin,
        _grpc(AskingExecutor("status"), "greeter") as greeter,
    ):
        path = tmp_path / "agents.yaml"
        path.write_text(
            "version: 1\nagents:\n"
            f"  - name: echoer\n    url: {echoer.url}\n    protocol: {{binding: grpc}}\n"
            f"  - name: twin\n    url: {twin.url}\n"
            f"  - name: greeter\n    url: {greeter.url}\n",
            encoding="utf-8",
        )

        def build(url: str) -> Litestar:
            settings = Settings(
                server=ServerSettings(public_url=url),
                store=StoreSettings(kind="memory"),
                default_skill="delegate",
            )
            return create_app(
                settings,
                store=MemoryTaskStore(),
                skills={"delegate": delegate, "swarm": swarm, "caller": caller},
                partners=Partners(load_registry(path)),
            )

        async with serve_on_loopback(build) as url, httpx.AsyncClient() as http:
            yield await A2AClient.from_url(url, http=http), echoer


async def _send(client: A2AClient, text: str, **metadata: object) -> Task:
    with anyio.fail_after(20):
        reply = await client.send(user_message(text), metadata=dict(metadata))
    assert isinstance(reply, Task)
    return reply


async def test_a_skill_calls_a_grpc_partner(hub: tuple[A2AClient, GrpcAgent]) -> None:
    task = await _send(hub[0], "hello", skill="caller")

    assert task.status.state is TaskState.COMPLETED
    assert _text(task) == "echoer said: hello"


async def test_delegate_relays_a_grpc_partners_answer_and_its_question(
    hub: tuple[A2AClient, GrpcAgent],
) -> None:
    client, _ = hub
    echoed = await _send(client, "hello there", agent="echoer")
    asked = await _send(client, "hi", agent="greeter")
    with anyio.fail_after(20):
        answer = user_message("Ada", task_id=asked.id, context_id=asked.context_id)
        async with client.stream(answer) as events:
            streamed = [event async for event in events]

    assert echoed.status.state is TaskState.COMPLETED
    assert _text(echoed) == "hello there"
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None
    assert asked.status.message.text() == QUESTION
    assert final_state(streamed) is TaskState.COMPLETED
    done = await client.get_task(asked.id)
    assert greet("Ada") in _text(done)


async def test_a_swarm_gathers_from_two_grpc_partners(hub: tuple[A2AClient, GrpcAgent]) -> None:
    task = await _send(
        hub[0], "ping", skill="swarm", strategy="broadcast", agents=["echoer", "twin"]
    )

    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts is not None
    report = next(p.data for p in task.artifacts[-1].parts if p.data is not None)
    assert sorted((b["agent"], b["state"]) for b in report["branches"]) == [
        ("echoer", "completed"),
        ("twin", "completed"),
    ]


async def test_canceling_the_hub_task_cancels_the_grpc_partners_task(
    hub: tuple[A2AClient, GrpcAgent], http: httpx.AsyncClient
) -> None:
    client, echoer = hub
    with anyio.fail_after(20):
        task_id = await delegated_wait(client)
        canceled = await client.cancel(task_id)
    partner = await A2AClient.from_url(echoer.url, http=http)
    try:
        with anyio.fail_after(20):
            while True:
                tasks = (await partner.list_tasks()).tasks
                if tasks and tasks[0].status.state is TaskState.CANCELED:
                    break
                await anyio.sleep(0.05)
    finally:
        await partner.aclose()

    assert canceled.status.state is TaskState.CANCELED
    assert len(tasks) == 1
    assert WAIT in {p.text for m in tasks[0].history or [] for p in m.parts}


async def test_push_configs_are_kept_read_listed_and_deleted_over_grpc(
    http: httpx.AsyncClient,
) -> None:
    async with sdk_grpc_agent(
        EchoOrWaitExecutor(), name="pusher", description="keeps push configs", skill=ECHO, push=True
    ) as agent:
        client = await A2AClient.from_url(agent.url, http=http)
        try:
            with anyio.fail_after(15):
                task = await client.send(user_message("hello"))
                assert isinstance(task, Task)
                config = TaskPushNotificationConfig(
                    task_id=task.id, id="c1", url="https://example.com/hook", token="tok-1"
                )
                made = await client.create_push_config(config)
                read = await client.get_push_config(task.id, "c1")
                listed = await client.list_push_configs(task.id)
                await client.delete_push_config(task.id, "c1")
                after = await client.list_push_configs(task.id)
                with pytest.raises(RemoteRpcError) as refused:
                    await client.extended_card()
        finally:
            await client.aclose()

    assert (made.id, made.url, made.token) == ("c1", "https://example.com/hook", "tok-1")
    assert read.url == made.url
    assert [c.id for c in listed.configs] == ["c1"]
    assert after.configs == []
    assert refused.value.code == -32004  # the SDK's answer for a card it does not extend


@pytest.mark.parametrize("with_client_certificate", [True, False])
async def test_a_partner_behind_mutual_tls_with_a_private_ca_is_called_with_the_entrys_files(
    tmp_path: Path, with_client_certificate: bool
) -> None:
    pki = private_pki(tmp_path)
    files = f"ca_file: {pki.ca_file}"
    if with_client_certificate:
        files += f", cert_file: {pki.client_cert}, key_file: {pki.client_key}"
    async with sdk_grpc_agent(
        EchoOrWaitExecutor(),
        name="secure",
        description="gRPC behind mutual TLS",
        skill=ECHO,
        tls=(pki.server_cert, pki.server_key),
        client_ca=pki.ca_file,
        bare=True,  # host:port: the entry's TLS files say it is TLS
    ) as agent:
        path = tmp_path / "agents.yaml"
        path.write_text(
            f"version: 1\nagents:\n  - name: secure\n    url: {agent.url}\n    tls: {{{files}}}\n"
        )
        async with Partners(load_registry(path)) as partners:
            client = await partners.client("secure")
            with anyio.fail_after(15):
                if with_client_certificate:
                    reply = await client.send(user_message("hello"))
                else:
                    with pytest.raises(ClientError) as refused:
                        await client.send(user_message("hello"))

    assert client.interface.protocol_binding == "GRPC"
    if with_client_certificate:
        assert isinstance(reply, Task)
        assert _text(reply) == "hello"
    else:  # the partner refuses a client without a certificate its CA signed
        assert isinstance(refused.value, AgentUnreachableError | ConnectionLostError)
        assert str(pki.client_key) not in str(refused.value)
