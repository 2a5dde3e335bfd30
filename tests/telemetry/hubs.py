"""Hubs for the telemetry tests: an agents.yaml written for them, tasks in memory, the
built-in delegate / swarm / echo skills, and the telemetry the test asks for."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace import ReadableSpan

from hub.config import Settings
from hub.registry import load_registry
from hub.skills.delegate import delegate
from hub.skills.echo import echo
from hub.skills.swarm import swarm
from hub.telemetry import Telemetry
from hub.testing import LoopbackHub, serve_hub

__all__ = [
    "by_name",
    "message",
    "observed_hub",
    "one_span",
    "parent_of",
    "rpc",
    "span_id",
    "write_agents",
]


def write_agents(path: Path, partners: Mapping[str, str], *, extra: str = "") -> Path:
    """An agents.yaml listing `partners` (name → URL); `extra` is added to each entry."""
    lines = ["version: 1", "agents:"]
    for name, url in partners.items():
        lines += [f"  - name: {name}", f"    url: {url}"]
        if extra:
            lines.append(extra)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def observed_hub(
    agents: Path,
    *,
    telemetry: Callable[[Settings], Telemetry] | None = None,
    settings: Mapping[str, object] | None = None,
) -> AbstractAsyncContextManager[LoopbackHub]:
    """A hub on loopback, its default skill `echo`.

    Args:
        agents: its agents.yaml.
        telemetry: builds its telemetry from its settings (the settings' own when None).
        settings: settings beyond the defaults (a dict in the shape of hub.yaml).
    """
    config = {"store": {"kind": "memory"}, "default_skill": "echo", **(settings or {})}
    hub_settings = Settings.model_validate(config)
    return serve_hub(
        skills=[echo, delegate, swarm],
        partners=load_registry(agents),
        settings=hub_settings,
        telemetry=telemetry(hub_settings) if telemetry is not None else None,
    )


def by_name(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def one_span(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    """The one span named `name` (the test fails, listing the names, if there is not one)."""
    found = by_name(spans, name)
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def message(text: str, **metadata: object) -> dict[str, Any]:
    """A user message in its wire form."""
    body: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if metadata:
        body["metadata"] = metadata
    return body


async def rpc(
    http: httpx.AsyncClient,
    url: str,
    method: str,
    params: dict[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    version: str = "1.0",
) -> dict[str, Any]:
    """One JSON-RPC call; the whole response object (result or error)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = await http.post(
        url, json=body, headers={"A2A-Version": version, **(headers or {})}, timeout=30
    )
    reply: dict[str, Any] = answer.json()
    return reply
