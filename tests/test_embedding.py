"""The hub embedded in a user's own program: skills given in Python (no settings file), the
ASGI app mounted in another server, and `await hub.serve()`; each answered over real HTTP."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import httpx
import pytest

from hub import Hub, SkillContext, TaskState, skill
from hub.client import A2AClient, build_http_client, user_message
from hub.errors import StoreInUseError
from hub.protocol import Task
from hub.store import SqliteTaskStore
from hub.testing import serve_on_loopback

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default settings keep tasks in ./var/hub.db: here, not in the repository (whose
    var/hub.db is the user's `make run` store)."""
    monkeypatch.chdir(tmp_path)


@skill(id="greet", description="Greets whoever writes.")
async def greet(ctx: SkillContext) -> str:
    return f"Hello, {ctx.text}!"


async def ask(url: str, text: str) -> Task:
    async with build_http_client() as http:
        client = await A2AClient.from_url(url, http=http)
        reply = await client.send(user_message(text))
    assert isinstance(reply, Task)
    return reply


def answer(task: Task) -> str:
    assert task.status.state is TaskState.COMPLETED
    return " ".join(
        part.text for artifact in task.artifacts or [] for part in artifact.parts if part.text
    )


async def test_skills_in_code_are_served_by_the_asgi_app_the_first_one_by_default(
    tmp_path: Path,
) -> None:
    agents = tmp_path / "agents.yaml"
    agents.write_text("version: 1\nagents: []\n")
    hub = Hub(skills=[greet], agents=agents)
    assert hub.settings.default_skill == "greet"
    async with serve_on_loopback(lambda url: hub.asgi_app(public_url=url)) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
        assert [entry["id"] for entry in card["skills"]] == ["greet"]
        assert answer(await ask(url, "Ada")) == "Hello, Ada!"


async def _serve_and_ask(hub: Hub, name: str) -> tuple[str, str]:
    """Where `hub.serve` listened and its answer to `name`, asked while it ran in this loop
    until cancelled."""
    async with anyio.create_task_group() as group:
        with anyio.fail_after(30):
            url = await group.start(partial(hub.serve, host="127.0.0.1", port=0))
            said = answer(await ask(url, name))
        group.cancel_scope.cancel()
    return url, said


async def test_hub_serve_runs_in_the_callers_event_loop_until_cancelled() -> None:
    _, answered = await _serve_and_ask(Hub(skills=[greet]), "Grace")
    assert answered == "Hello, Grace!"


async def test_hub_serve_says_where_it_listens_and_where_it_keeps_the_tasks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, answered = await _serve_and_ask(Hub(skills=[greet]), "Ada")
    assert answered == "Hello, Ada!"
    said = capsys.readouterr().err.splitlines()
    assert said[0] == f"a2a-hub listening on {url} (store: {Path.cwd() / 'var' / 'hub.db'})"


async def test_hub_serve_on_a_store_another_owner_holds_raises_before_listening(
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner = SqliteTaskStore(Path("var/hub.db"))
    await owner.open()
    try:
        with anyio.fail_after(30), pytest.raises(StoreInUseError):
            await Hub(skills=[greet]).serve(host="127.0.0.1", port=0)
    finally:
        await owner.close()
    assert "listening on" not in capsys.readouterr().err


async def test_a_cancelled_hub_serve_shuts_the_app_down_and_frees_its_store() -> None:
    _, answered = await _serve_and_ask(Hub(skills=[greet]), "Ada")
    assert answered == "Hello, Ada!"
    # The app's shutdown ran: the SQLite file and its lock are free for the next one.
    store = SqliteTaskStore(Path("var") / "hub.db")
    await store.open()
    await store.close()
