"""Scripted partners for the swarm tests (`hub.testing.ScriptedAgent`s that answer a fixed
text after a delay, or fail), served on real loopback sockets and named in an agents.yaml."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from litestar import Litestar

from hub.registry import Registry, load_registry
from hub.testing import ScriptedAgent, answer, fail, serve_on_loopback


def scripted(
    reply: str | None, *, delay: float = 0.0, tags: tuple[str, ...] = ()
) -> Callable[[str], Litestar]:
    """A partner that answers `reply` after `delay` seconds (None: fails); `{text}` in the
    reply is replaced by the message's text."""
    script = fail(delay=delay) if reply is None else answer(reply, delay=delay)
    return ScriptedAgent(skill_id="work", reply=script, tags=tags).app


@asynccontextmanager
async def partner_registry(
    tmp_path: Path, partners: dict[str, tuple[Callable[[str], Litestar], tuple[str, ...]]]
) -> AsyncIterator[tuple[Registry, dict[str, str]]]:
    """Serve each partner and write an agents.yaml naming them (with their tags)."""
    async with AsyncExitStack() as stack:
        urls = {
            name: await stack.enter_async_context(serve_on_loopback(build))
            for name, (build, _) in partners.items()
        }
        lines = ["version: 1", "agents:"]
        for name, (_, tags) in partners.items():
            lines += [f"  - name: {name}", f"    url: {urls[name]}"]
            if tags:
                lines.append(f"    tags: [{', '.join(tags)}]")
        path = tmp_path / "agents.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield load_registry(path), urls
