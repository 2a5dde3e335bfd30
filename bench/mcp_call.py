"""The cost of an MCP tool call: an MCP client → the hub's `/mcp` → partner, against the same
partner called directly.

The partner is `bench.canned_server` answering at once (the fastest partner there is), so what
is measured is the hub. Paths, driven in the same run, interleaved round by round, each round
on a fresh hub:

- `direct`: A2A SendMessage to the partner (`bench.load`'s `send`);
- `a2a via hub`: A2A SendMessage to the hub's `delegate` skill, which calls the partner;
- `a2a stream via hub`: the same as SendStreamingMessage (what an MCP call does inside);
- `mcp 2026-07-28`: `tools/call` of `a2a_partner` with the official `mcp` client, at the
  current protocol revision (one HTTP request per call);
- `mcp legacy`: the same at the handshake revision (2025-11-25, a session).

An MCP call is a hub task on the `delegate` skill, streamed, so the hub does what `a2a via
hub` does plus the MCP layer. Reported per concurrency, as medians over rounds with the
min and max: p50 and p99 of each path, the p50 added over `direct`, calls/s, and the hub's CPU per
call (utime + stime of the hub process over the run, divided by the calls that succeeded),
and the client's CPU per call (this process: the MCP SDK client, or the load generator).
The hub is pinned to core 0; the partner and the clients share core 1.

    python -m bench.mcp_call [--concurrency 1,8] [--duration 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio

from bench.load import percentile, run_load_sync
from bench.spread import spread
from bench.target import (
    RESULTS,
    RunningServer,
    Target,
    add_run_arguments,
    canned_command,
    hub_command,
    hub_rounds,
)

__all__ = ["main"]

_AGENTS = Path("var/bench-mcp-agents.yaml")
_STORE = Path("var/bench-mcp.db")
_SETTLE = 0.25
_PATHS = ("direct", "a2a via hub", "a2a stream via hub", "mcp 2026-07-28", "mcp legacy")


@dataclass(frozen=True, slots=True)
class _Run:
    path: str
    concurrency: int
    round: int
    completed: int
    errors: int
    p50_ms: float
    p99_ms: float
    calls_per_s: float
    hub_cpu_ms: float | None
    client_cpu_ms: float


def _hub_command(port: int) -> list[str]:
    return hub_command(
        port, config="bench/mcp.yaml", store=_STORE, extra=["--agents", str(_AGENTS)]
    )


async def _mcp_load(
    port: int, mode: str, concurrency: int, duration: float
) -> tuple[list[float], int]:
    """Closed-loop `tools/call`s from `concurrency` clients for `duration` seconds: the
    latencies of the calls that succeeded, and the count of those that did not."""
    from mcp import Client

    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + duration

    async def worker() -> None:
        nonlocal errors
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
            await client.list_tools()
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                result = await client.call_tool("a2a_partner", {"message": "ping"})
                if result.is_error:
                    errors += 1
                else:
                    latencies.append((time.perf_counter() - started) * 1e3)

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return latencies, errors


def _measure(
    path: str,
    server: RunningServer,
    concurrency: int,
    duration: float,
    round_no: int,
    *,
    hub: RunningServer | None,
) -> _Run:
    before = hub.cpu_seconds() if hub is not None else 0.0
    started = time.perf_counter()
    client_before = time.process_time()
    if path.startswith("mcp"):
        mode = "2026-07-28" if path == "mcp 2026-07-28" else "legacy"
        latencies, errors = anyio.run(_mcp_load, server.port, mode, concurrency, duration)
        elapsed = time.perf_counter() - started
        completed, p50, p99 = (
            len(latencies),
            percentile(sorted(latencies), 0.5),
            percentile(sorted(latencies), 0.99),
        )
    else:
        scenario = "stream" if path == "a2a stream via hub" else "send"
        load = run_load_sync(
            port=server.port, scenario=scenario, concurrency=concurrency, duration=duration
        )
        elapsed = load.elapsed_s
        completed, errors, p50, p99 = load.completed, load.errors, load.p50_ms, load.p99_ms
    client_ms = (time.process_time() - client_before) / max(completed, 1) * 1e3
    cpu_ms = None
    if hub is not None:
        time.sleep(_SETTLE)
        cpu_ms = (hub.cpu_seconds() - before) / completed * 1e3 if completed else 0.0
    run = _Run(
        path,
        concurrency,
        round_no,
        completed,
        errors,
        p50,
        p99,
        completed / elapsed,
        cpu_ms,
        client_ms,
    )
    cpu = f"  hub CPU {cpu_ms:.3f} ms/call" if cpu_ms is not None else ""
    print(
        f"  {path:15} c={concurrency:<3} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"{run.calls_per_s:8.1f}/s  errors {errors}  client CPU {client_ms:.3f} ms/call{cpu}",
        flush=True,
    )
    return run


def _figure(
    runs: list[_Run], path: str, c: int, pick: Callable[[_Run], float | None]
) -> list[float]:
    return [
        v
        for run in runs
        if run.path == path and run.concurrency == c and (v := pick(run)) is not None
    ]


def _cell(values: list[float], digits: int = 2) -> str:
    return spread(values, digits) if values else "-"


def _report(runs: list[_Run], concurrencies: list[int]) -> str:
    lines = [
        "| c | path | p50 ms | added p50 ms | p99 ms | calls/s | hub CPU ms/call "
        "| client CPU ms/call | errors |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in concurrencies:
        direct = _figure(runs, "direct", c, lambda run: run.p50_ms)
        for path in _PATHS:
            p50 = _figure(runs, path, c, lambda run: run.p50_ms)
            added = [value - statistics.median(direct) for value in p50] if path != "direct" else []
            lines.append(
                f"| {c} | {path} | {_cell(p50)} | {_cell(added)} "
                f"| {_cell(_figure(runs, path, c, lambda run: run.p99_ms))} "
                f"| {_cell(_figure(runs, path, c, lambda run: run.calls_per_s), 0)} "
                f"| {_cell(_figure(runs, path, c, lambda run: run.hub_cpu_ms), 3)} "
                f"| {_cell(_figure(runs, path, c, lambda run: run.client_cpu_ms), 3)} "
                f"| {sum(r.errors for r in runs if r.path == path and r.concurrency == c)} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Measure MCP tool calls through the hub and print a Markdown table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, concurrency="1,8", duration=5.0)
    args = parser.parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",")]

    def measure(partner: RunningServer, hub: RunningServer, round_no: int) -> list[_Run]:
        _measure("mcp 2026-07-28", hub, 4, args.warmup, 0, hub=None)
        _measure("a2a via hub", hub, 4, args.warmup, 0, hub=None)
        runs = []
        for c in concurrencies:
            runs.append(_measure("direct", partner, c, args.duration, round_no, hub=None))
            for path in _PATHS[1:]:
                runs.append(_measure(path, hub, c, args.duration, round_no, hub=hub))
        return runs

    runs = hub_rounds(
        "mcp_call",
        Target(name="partner", command=canned_command("--delay", "0")),
        [Target(name="hub", command=_hub_command, store=_STORE)],
        agents=_AGENTS,
        rounds=args.rounds,
        measure=measure,
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mcp_call.json").write_text(json.dumps([asdict(run) for run in runs], indent=2))
    print()
    print(_report(runs, concurrencies))


if __name__ == "__main__":
    main()
