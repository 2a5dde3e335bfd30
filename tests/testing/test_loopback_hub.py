"""`hub.testing.serve_hub`: a hub on a loopback socket, its partners given in each shape, and
what it yields; and `hub.testing` importing nothing of the tests' own tools."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from hub.client import A2AClient, user_message
from hub.config import Settings, StoreSettings
from hub.protocol import Task, TaskState
from hub.registry import AgentEntry, Registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import PartnerList, ScriptedAgent, answer, serve_hub

pytestmark = pytest.mark.anyio


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


@pytest.fixture
async def partner_url() -> AsyncIterator[str]:
    async with ScriptedAgent("billing", reply=answer("paid {text}")).serve() as url:
        yield url


async def test_the_hub_yields_its_url_app_settings_store_and_partners(
    http: httpx.AsyncClient,
) -> None:
    store = MemoryTaskStore()
    settings = Settings(store=StoreSettings(kind="memory"), default_skill="echo")
    async with serve_hub(skills=[delegate, echo], settings=settings, store=store) as hub:
        client = await A2AClient.from_url(hub.url, http=http)
        with anyio.fail_after(30):
            task = await client.send(user_message("hi"))
        assert isinstance(task, Task)
        kept = await hub.store.get(task.id)

    assert hub.store is store
    assert hub.settings.server.public_url == hub.url
    assert hub.app.state.hub is not None
    assert client.card.supported_interfaces[0].url.startswith(hub.url)
    assert [skill.id for skill in client.card.skills] == ["delegate", "echo"]
    assert task.status.state is TaskState.COMPLETED  # echo, the settings' default skill
    assert kept is not None
    assert kept.task.id == task.id
    assert hub.partners.names() == ()


async def test_the_first_skill_is_the_default_when_the_settings_name_none(
    http: httpx.AsyncClient,
) -> None:
    async with serve_hub(skills=[echo, delegate]) as hub:
        client = await A2AClient.from_url(hub.url, http=http)
        with anyio.fail_after(30):
            task = await client.send(user_message("hi"))

    assert isinstance(task, Task)
    assert task.metadata is not None
    assert task.metadata["skill"] == "echo"


@pytest.mark.parametrize("shape", ["urls", "entries", "registry", "function"])
async def test_partners_are_given_by_url_entry_registry_or_function_of_the_hubs_url(
    shape: str, partner_url: str, http: httpx.AsyncClient
) -> None:
    entries = [AgentEntry(name="billing", url=partner_url)]
    given: dict[str, PartnerList] = {
        "urls": {"billing": partner_url},
        "entries": entries,
        "registry": Registry(entries),
    }
    seen: list[str] = []

    def of_url(url: str) -> PartnerList:
        seen.append(url)
        return entries

    partners = of_url if shape == "function" else given[shape]
    async with serve_hub(skills=[delegate], partners=partners) as hub:
        client = await A2AClient.from_url(hub.url, http=http)
        with anyio.fail_after(30):
            task = await client.send(user_message("42"), metadata={"agent": "billing"})

    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert [p.text for a in task.artifacts or [] for p in a.parts] == ["paid 42"]
    assert seen == ([hub.url] if shape == "function" else [])


def test_importing_hub_testing_loads_neither_pytest_nor_the_a2a_sdk() -> None:
    probe = (
        "import sys, hub.testing; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pytest', '_pytest', 'a2a'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
