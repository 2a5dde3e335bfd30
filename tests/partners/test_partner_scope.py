"""Partner scopes: a caller limited to some partners reaches only those, and the others do not
exist for it — not in lookups, listings, suggestions or error messages — down to the partners
its tasks' skills call."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager

from hub.app import create_app
from hub.config import AuthSettings, CredentialSettings, LimitSettings, Settings, StoreSettings
from hub.errors import UnknownAgentError
from hub.mcp import Catalog
from hub.partners import Conversations, Partners, PartnerView
from hub.protocol import AgentSkill, SendMessageRequest, Task, TaskState, user_message
from hub.protocol.trace import EVERY, Allowed, CallScope, use_scope
from hub.registry import load_registry
from hub.server.auth import Authenticator
from hub.skills.delegate import delegate
from hub.skills.toolbox import Toolbox
from hub.skills.tools import with_tools
from hub.store import MemoryTaskStore
from hub.tasks import TaskManager
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio

SCOPED = CallScope(
    trace_id="1" * 32, parent_id="2" * 16, agents=Allowed.of({"research", "translate"})
)
OPS_KEY = "ops-key-0123456789abcdef"
BOT_KEY = "bot-key-0123456789abcdef"


def failure(call: object) -> str:
    with pytest.raises(UnknownAgentError) as caught:
        call()  # type: ignore[operator]
    return str(caught.value)


def test_a_partner_outside_the_scope_is_unknown_word_for_word(tmp_path: Path) -> None:
    registry = registry_file(
        tmp_path / "agents.yaml",
        {"research": "http://r", "billing": "http://b", "translate": "http://t"},
    )
    directory = Partners(registry)
    assert list(directory) == ["research", "billing", "translate"]
    partners = PartnerView.of(directory, SCOPED)
    assert list(partners) == ["research", "translate"]
    assert len(partners) == 2
    assert "billing" not in partners
    hidden = failure(lambda: partners.entry("billing"))
    missing = failure(lambda: partners.entry("payroll"))
    typo = failure(lambda: partners["biling"])
    assert partners.entry("research").name == "research"
    assert hidden == "agent 'billing' is not in agents.yaml (known: research, translate)"
    assert missing.replace("payroll", "billing") == hidden
    assert "billing" not in typo.replace("biling", "")  # no "did you mean 'billing'?"


def test_a_disabled_partner_outside_the_scope_is_not_even_disabled(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "version: 1\nagents:\n"
        "  - {name: research, url: 'http://r'}\n"
        "  - {name: billing, url: 'http://b', enabled: false}\n",
        encoding="utf-8",
    )
    partners = Partners(load_registry(path))
    assert "disabled" in failure(lambda: partners.entry("billing"))
    scoped = PartnerView.of(partners, SCOPED)
    assert failure(lambda: scoped.entry("billing")) == (
        "agent 'billing' is not in agents.yaml (known: research)"
    )


@pytest.fixture
async def partners(tmp_path: Path) -> AsyncIterator[Partners]:
    """Two partners, `echoer` and `secret`."""
    async with serve_on_loopback(sdk_jsonrpc) as first, serve_on_loopback(sdk_jsonrpc) as second:
        yield Partners(registry_file(tmp_path / "agents.yaml", {"echoer": first, "secret": second}))


@pytest.fixture
def conversations() -> Conversations:
    return Conversations()


@pytest.fixture
async def hub(partners: Partners, conversations: Conversations) -> AsyncIterator[httpx.AsyncClient]:
    """A hub delegating to the two partners; the bot may use `echoer` only."""
    credentials = (
        CredentialSettings(name="ops", api_key=OPS_KEY),
        CredentialSettings(name="bot", api_key=BOT_KEY, agents=("echoer",)),
    )
    settings = Settings(
        store=StoreSettings(kind="memory"),
        default_skill="delegate",
        auth=AuthSettings(enabled=True, credentials=credentials),
    )
    app = create_app(
        settings,
        store=MemoryTaskStore(),
        skills={"delegate": delegate},
        partners=partners,
        conversations=conversations,
    )
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            yield http


async def delegate_to(
    http: httpx.AsyncClient, key: str, agent: str | None, *, context_id: str | None = None
) -> dict[str, object]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    if context_id:
        message["contextId"] = context_id
    body = {"message": message, "metadata": {"agent": agent} if agent else {}}
    sent = await http.post(
        "/message:send", json=body, headers={"A2A-Version": "1.0", "X-API-Key": key}
    )
    task: dict[str, object] = sent.json()["task"]
    return task


async def test_a_task_reaches_only_the_partners_its_caller_may_use(
    hub: httpx.AsyncClient,
) -> None:
    refused = await delegate_to(hub, BOT_KEY, "secret")
    status = refused["status"]
    assert isinstance(status, dict)
    assert status["state"] == "TASK_STATE_FAILED"
    assert status["message"]["parts"][0]["text"] == (
        "agent 'secret' is not in agents.yaml (known: echoer)"
    )
    routed = await delegate_to(hub, BOT_KEY, None)  # the router only sees `echoer`
    assert routed["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert routed["artifacts"][0]["metadata"]["agent"] == "echoer"  # type: ignore[index]
    unscoped = await delegate_to(hub, OPS_KEY, "secret")
    assert unscoped["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]


async def test_callers_sharing_a_context_id_never_share_a_partner_conversation(
    hub: httpx.AsyncClient, conversations: Conversations
) -> None:
    for key in (OPS_KEY, BOT_KEY, OPS_KEY):
        task = await delegate_to(hub, key, "echoer", context_id="shared")
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert len(conversations) == 2  # one per caller; ops continued its own


# -- an unset scope allows nothing --------------------------------------------------------------


def test_a_view_without_a_scope_or_whose_scope_never_named_partners_reaches_none(
    tmp_path: Path,
) -> None:
    partners = Partners(registry_file(tmp_path / "agents.yaml", {"research": "http://r"}))
    for view in (PartnerView.of(partners, None), PartnerView.of(partners, CallScope.new())):
        assert list(view) == []
        assert len(view) == 0
        assert "research" not in view
        assert failure(lambda: view.entry("research")) == (  # noqa: B023
            "agent 'research' is not in agents.yaml (it lists no enabled agents)"
        )
    assert list(PartnerView.whole(partners)) == ["research"]


async def test_a_caller_without_a_partner_list_reaches_every_partner_and_auth_off_too() -> None:
    open_hub = Authenticator(AuthSettings(), skills=[])
    assert (await open_hub.identify({})).scope(CallScope.new()).agents == EVERY
    guarded = Authenticator(
        AuthSettings(
            enabled=True,
            credentials=(
                CredentialSettings(name="ops", api_key=OPS_KEY),
                CredentialSettings(name="bot", api_key=BOT_KEY, agents=("echoer",)),
            ),
        ),
        skills=[],
    )
    ops = (await guarded.identify({"x-api-key": OPS_KEY})).scope(CallScope.new())
    bot = (await guarded.identify({"x-api-key": BOT_KEY})).scope(CallScope.new())
    assert ops.agents == EVERY
    assert list(bot.agents.names) == ["echoer"]
    assert "secret" not in bot.agents


async def test_a_task_started_outside_any_call_scope_reaches_no_partner(
    partners: Partners,
) -> None:
    """Work that forgot to carry its caller's scope is refused every partner, with the error
    of an unknown one, instead of reaching them all."""
    store = MemoryTaskStore()
    await store.open()
    served, _ = with_tools({"delegate": delegate}, partners, lambda: manager)
    manager = TaskManager(
        store=store, executors=served, default_skill="delegate", limits=LimitSettings()
    )
    request = SendMessageRequest(message=user_message("hi"), metadata={"agent": "echoer"})
    async with partners, manager:
        with anyio.fail_after(30):
            task = await manager.send(request)
    await store.close()
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None
    assert task.status.message.text() == (
        "agent 'echoer' is not in agents.yaml (it lists no enabled agents)"
    )


def test_mcp_lists_no_partner_tool_outside_a_call_scope(tmp_path: Path) -> None:
    registry = registry_file(tmp_path / "agents.yaml", {"research": "http://r"})
    card = AgentSkill(id="delegate", name="delegate", description="d", tags=[])
    toolbox = Toolbox(Partners(registry), {"delegate": card}, manager=lambda: None)  # type: ignore[arg-type,return-value]
    catalog = Catalog(toolbox, ["delegate"])
    assert [definition.name for definition in catalog.definitions()] == ["delegate"]
    with use_scope(CallScope.new(agents=EVERY)):
        assert [definition.name for definition in catalog.definitions()] == [
            "a2a_research",
            "delegate",
        ]
