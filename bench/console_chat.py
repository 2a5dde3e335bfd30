"""What a chat turn costs beside the A2A endpoint it stands for: the same message to the
echo skill sent as a console chat turn (`POST {ui}/chat/turn`, a form with the session's
CSRF token, answered with the turn's event stream) and as `POST /message:stream` (REST,
JSON), one after the other, over loopback HTTP to a hub served in this process
(`hub.testing.serve_hub`, memory store, no access log). Each request's time is from the
request sent to the stream's last byte read; a turn with metadata, a data part and a 16 KiB
file is measured too. Per round, the median of `--turns` requests of each kind; across
rounds, the median of those medians, with the min and max, and this process's CPU per
request (client and server together).

    python -m bench.console_chat [--rounds 5] [--turns 200]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

import anyio
import httpx

from hub.config import Settings, StoreSettings, TelemetrySettings
from hub.skills.echo import echo
from hub.testing import serve_hub

__all__ = ["main"]

Send = Callable[[httpx.AsyncClient], Awaitable[None]]
_FILE = b"x" * (16 * 1024)


async def _turn(client: httpx.AsyncClient) -> None:
    answer = await client.post("/ui/chat/turn", data={"target": "skill:echo", "text": "hello"})
    assert answer.text.endswith("event: end\ndata: {}\n\n"), answer.text


async def _attached(client: httpx.AsyncClient) -> None:
    answer = await client.post(
        "/ui/chat/turn",
        data={
            "target": "skill:echo",
            "text": "hello",
            "metadata": '{"ticket": 42}',
            "data": '{"rows": [1, 2, 3]}',
        },
        files={"files": ("notes.bin", _FILE, "application/octet-stream")},
    )
    assert answer.text.endswith("event: end\ndata: {}\n\n"), answer.text


async def _rest(client: httpx.AsyncClient) -> None:
    body = {
        "message": {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": "hello"}],
        },
        "metadata": {"skill": "echo"},
    }
    answer = await client.post("/message:stream", json=body, headers={"A2A-Version": "1.0"})
    assert answer.status_code == 200, answer.text
    assert "TASK_STATE_COMPLETED" in answer.text, answer.text


KINDS: dict[str, Send] = {
    "REST message:stream": _rest,
    "chat turn": _turn,
    "chat turn, metadata + data + 16 KiB file": _attached,
}


async def _round(turns: int) -> dict[str, tuple[float, float]]:
    """Per kind: the median milliseconds of a request, and the CPU milliseconds of one."""
    settings = Settings(
        store=StoreSettings(kind="memory"),
        default_skill="echo",
        telemetry=TelemetrySettings(access_log=False),
    )
    async with (
        serve_hub(skills=[echo], settings=settings) as hub,
        httpx.AsyncClient(base_url=hub.url, timeout=30) as client,
    ):
        page = await client.get("/ui/chat")
        found = re.search(r'name="_csrf" value="([^"]+)"', page.text)
        assert found is not None
        client.headers["X-CSRF-Token"] = found.group(1)
        for send in KINDS.values():  # warm every path once
            await send(client)
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        cpu: dict[str, float] = dict.fromkeys(KINDS, 0.0)
        for _ in range(turns):
            for kind, send in KINDS.items():
                started, used = time.perf_counter(), time.process_time()
                await send(client)
                times[kind].append((time.perf_counter() - started) * 1000)
                cpu[kind] += (time.process_time() - used) * 1000
    return {kind: (statistics.median(times[kind]), cpu[kind] / turns) for kind in KINDS}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args(argv)
    rounds = [anyio.run(_round, args.turns) for _ in range(args.rounds)]
    print(f"{args.rounds} rounds of {args.turns} requests of each kind; ms, median (min-max)")
    print(f"{'request':44} {'time':>22} {'CPU':>22}")
    for kind in KINDS:
        latency = [found[kind][0] for found in rounds]
        cpu = [found[kind][1] for found in rounds]
        print(
            f"{kind:44} "
            f"{statistics.median(latency):7.2f} ({min(latency):.2f}-{max(latency):.2f}) "
            f"{statistics.median(cpu):7.2f} ({min(cpu):.2f}-{max(cpu):.2f})"
        )


if __name__ == "__main__":
    main()
