"""Partner scopes: a caller limited to some partners reaches only those, and the others do not
exist for it — not in lookups, listings, suggestions or error messages — down to the partners
its tasks' skills call."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager

from hub.config import AuthSettings, CredentialSettings, Settings, StoreSettings
from hub.errors import UnknownAgentError
from hub.partners import Partners
from hub.protocol.trace import CallScope, use_scope
from hub.registry import load_registry
from hub.server import create_app
from hub.skills.delegate import delegate
from hub.store import MemoryTaskStore
from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.tools.agents import registry_file

pytestmark = pytest.mark.anyio

SCOPED = CallScope(
    trace_id="1" * 32, parent_id="2" * 16, agents=frozenset({"research", "translate"})
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
    partners = Partners(registry)
    assert list(partners) == ["research", "billing", "translate"]
    with use_scope(SCOPED):
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
    with use_scope(SCOPED):
        assert failure(lambda: partners.entry("billing")) == (
            "agent 'billing' is not in agents.yaml (known: research)"
        )


@pytest.fixture
async def partners(tmp_path: Path) -> AsyncIterator[Partners]:
    """Two partners, `echoer` and `secret`."""
    async with serve_on_loopback(sdk_jsonrpc) as first, serve_on_loopback(sdk_jsonrpc) as second:
        yield Partners(registry_file(tmp_path / "agents.yaml", {"echoer": first, "secret": second}))


@pytest.fixture
async def hub(partners: Partners) -> AsyncIterator[httpx.AsyncClient]:
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
    hub: httpx.AsyncClient, partners: Partners
) -> None:
    for key in (OPS_KEY, BOT_KEY, OPS_KEY):
        task = await delegate_to(hub, key, "echoer", context_id="shared")
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"  # type: ignore[index]
    assert len(partners.conversations) == 2  # one per caller; ops continued its own
