"""What the overview's live updates cost the hub: its CPU with five consoles open on the
overview against the same hub with none, under the same modest steady load.

An `a2a-hub serve` process (`bench/console_overview.yaml`, pinned to core 0) has one partner,
`bench.canned_server` answering after 10 ms (core 1, with this process). The load is
`--rate` A2A requests per second, paced, half of them answered by the echo skill and half
delegated to the partner (so the overview charts the hub's and a partner's calls). A console
is what `console.js` does on the overview: one Server-Sent Events subscription to
`/ui/overview/events`, and on each event one GET of `/ui/overview/fragment` (the whole
overview with its charts). Each round measures two windows of `--window` seconds on one
fresh hub, in alternating order: the load alone, and the load with `--consoles` consoles
open (subscribed before the window starts). The hub's CPU is utime + stime of its process
from /proc (10 ms ticks) over the window, as a share of one core; the cost of the consoles
is the difference. Medians over `--rounds`, with the min and max.

    python -m bench.console_overview                 # 5 consoles, 10 req/s, 5 rounds of 30 s
    python -m bench.console_overview --rounds 3 --window 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio
import httpx

from bench.target import RunningServer, Target, canned_command, hub_command, hub_rounds
from hub.protocol import new_id

__all__ = ["main"]

_STORE = Path("var/bench-console-overview.db")
_AGENTS = Path("var/bench-console-overview-agents.yaml")
_RESULTS = Path(__file__).parent / "results"


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """One measured window: the hub's CPU share of a core, and what the consoles did."""

    consoles: int
    cpu: float
    requests: int
    events: int
    fragments: int
    fragment_ms: float | None


def _hub_command(port: int) -> list[str]:
    return hub_command(
        port,
        config="bench/console_overview.yaml",
        store=_STORE,
        extra=["--agents", str(_AGENTS)],
    )


def _body(number: int) -> dict[str, object]:
    metadata = {"skill": "delegate", "agent": "partner"} if number % 2 else None
    return {
        "message": {
            "messageId": new_id(),
            "role": "ROLE_USER",
            "parts": [{"text": f"request {number}"}],
        },
        "metadata": metadata,
    }


async def _load(http: httpx.AsyncClient, rate: float, stop: anyio.Event, sent: list[int]) -> None:
    """`rate` requests per second, each started on its beat (a slow answer does not delay
    the next), until `stop` is set."""
    started = time.monotonic()

    async def one(number: int) -> None:
        try:
            answer = await http.post("/message:send", json=_body(number))
        except (httpx.RemoteProtocolError, httpx.ReadError):
            return  # a kept-alive connection closed as it was reused: not counted
        if answer.status_code == 200:
            sent[0] += 1

    async with anyio.create_task_group() as group:
        number = 0
        while not stop.is_set():
            group.start_soon(one, number)
            number += 1
            delay = started + number / rate - time.monotonic()
            with anyio.move_on_after(max(delay, 0)):
                await stop.wait()


async def _fetch(http: httpx.AsyncClient, path: str) -> httpx.Response:
    """GET `path`, again once if the server closed the kept-alive connection as it was
    reused (its idle timeout is about the time between two fetches), as a browser does."""
    try:
        return await http.get(path)
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return await http.get(path)


async def _console(
    http: httpx.AsyncClient,
    ready: anyio.Event,
    stop: anyio.Event,
    counts: list[int],
    times: list[float],
) -> None:
    """One open overview: its event stream, and a fragment fetched on each event."""
    async with http.stream("GET", "/ui/overview/events", timeout=None) as events:
        assert events.status_code == 200, events.status_code
        counts[0] += 1
        if counts[0] == counts[1]:
            ready.set()
        async with anyio.create_task_group() as group:

            async def read() -> None:
                async for line in events.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    counts[2] += 1
                    began = time.perf_counter()
                    fragment = await _fetch(http, "/ui/overview/fragment")
                    assert fragment.status_code == 200, fragment.status_code
                    times.append((time.perf_counter() - began) * 1000)

            group.start_soon(read)
            await stop.wait()
            group.cancel_scope.cancel()


async def _window(hub: RunningServer, consoles: int, rate: float, seconds: float) -> Window:
    url = f"http://127.0.0.1:{hub.port}"
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
    async with httpx.AsyncClient(
        base_url=url, headers={"A2A-Version": "1.0"}, timeout=30, limits=limits
    ) as http:
        stop, ready = anyio.Event(), anyio.Event()
        counts = [0, consoles, 0]  # subscribed, wanted, events heard
        times: list[float] = []
        sent = [0]
        async with anyio.create_task_group() as group:
            group.start_soon(_load, http, rate, stop, sent)
            for _ in range(consoles):
                group.start_soon(_console, http, ready, stop, counts, times)
            if consoles:
                with anyio.fail_after(30):
                    await ready.wait()
            await anyio.sleep(2.0)  # the load settles; the consoles' first fetches are done
            heard, fetched, before = counts[2], len(times), hub.cpu_seconds()
            began = time.monotonic()
            await anyio.sleep(seconds)
            cpu = hub.cpu_seconds() - before
            elapsed = time.monotonic() - began
            heard, fetched = counts[2] - heard, len(times) - fetched
            stop.set()
    in_window = times[len(times) - fetched :] if fetched else []
    return Window(
        consoles=consoles,
        cpu=cpu / elapsed,
        requests=sent[0],
        events=heard,
        fragments=fetched,
        fragment_ms=statistics.median(in_window) if in_window else None,
    )


def _figure(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} % ({min(values):.2f} to {max(values):.2f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--consoles", type=int, default=5)
    parser.add_argument("--rate", type=float, default=10.0, help="A2A requests per second")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    def measure(partner: RunningServer, hub: RunningServer, round_no: int) -> list[Window]:
        order = (0, args.consoles) if round_no % 2 else (args.consoles, 0)
        found = []
        for consoles in order:
            window = anyio.run(_window, hub, consoles, args.rate, args.window)
            print(
                f"  {consoles} consoles: hub CPU {window.cpu * 100:.2f} % of a core, "
                f"{window.events} events, {window.fragments} fragments"
                + (f" (median {window.fragment_ms:.1f} ms)" if window.fragment_ms else ""),
                flush=True,
            )
            found.append(window)
        return found

    windows = hub_rounds(
        "console_overview",
        Target(name="partner", command=canned_command("--delay", "0.01")),
        [Target(name="hub", command=_hub_command, store=_STORE)],
        agents=_AGENTS,
        rounds=args.rounds,
        measure=measure,
    )
    idle = [w for w in windows if not w.consoles]
    open_ = [w for w in windows if w.consoles]
    cost = [(o.cpu - i.cpu) * 100 for i, o in zip(idle, open_, strict=True)]
    per_minute = [o.fragments / args.window * 60 / args.consoles for o in open_]
    _RESULTS.mkdir(parents=True, exist_ok=True)
    (_RESULTS / "console_overview.json").write_text(
        json.dumps([asdict(window) for window in windows], indent=2)
    )
    print()
    print(
        f"{args.rate:g} req/s (half delegated to a 10 ms partner), {args.rounds} rounds of "
        f"{args.window:g} s windows; medians (min to max)"
    )
    print(f"hub CPU, no console:        {_figure([w.cpu * 100 for w in idle])}")
    print(f"hub CPU, {args.consoles} consoles open:  {_figure([w.cpu * 100 for w in open_])}")
    print(f"the consoles' cost:         {_figure(cost)}")
    print(f"fragments per console per minute: {statistics.median(per_minute):.1f}")


if __name__ == "__main__":
    main()
