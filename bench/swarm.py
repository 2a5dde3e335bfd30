"""Swarm benchmark: a broadcast to 10, 50 and 200 partners, and a race of 10.

The partners are `bench.canned_server` processes behind many agents.yaml names:

- broadcast: every partner answers after a fixed 50 ms, so a swarm of N with concurrency N
  should end a little after 50 ms; what it takes beyond that is the hub's own cost. Target:
  at most 50 ms + 100 ms at 200 partners, and at most 1.5 ms of hub CPU per branch.
- race: one partner answers in 10 ms, nine in 2 s (they stream, so the hub knows their task
  ids at once). Target: the hub answers in under 100 ms, and all nine losers receive a
  CancelTask (counted by the slow partner process).

The hub runs `bench/swarm.yaml` (the swarm skill) pinned to core 0; partners and this client
share core 1. Each figure is the median of `--rounds` swarms, sent as one SendMessage each;
hub CPU is utime + stime of the hub process over the swarm, divided by its branches.

    python -m bench.swarm [--sizes 10,50,200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.spread import spread
from bench.target import (
    REPO,
    RunningServer,
    ServerStartError,
    Target,
    canned_command,
    exit_on_sigterm,
    hub_command,
    pin_self,
    start_server,
)

__all__ = ["main"]

RESULTS = REPO / "bench" / "results"
_AGENTS = Path("var/bench-swarm-agents.yaml")
_STORE = Path("var/bench-swarm.db")
_RACE_LOSERS = 9


def _hub(port: int) -> list[str]:
    return hub_command(
        port, config="bench/swarm.yaml", store=_STORE, extra=["--agents", str(_AGENTS)]
    )


def _write_agents(echo: int, fast: int, slow: int, size: int) -> None:
    lines = ["version: 1", "agents:"]
    for i in range(size):
        lines += [f"  - name: b{i}", f"    url: http://127.0.0.1:{echo}/b{i}"]
    lines += ["  - name: fast", f"    url: http://127.0.0.1:{fast}/fast", "    tags: [race]"]
    for i in range(_RACE_LOSERS):
        lines += [f"  - name: slow{i}", f"    url: http://127.0.0.1:{slow}/s{i}"]
        lines.append("    tags: [race]")
    (REPO / _AGENTS).parent.mkdir(parents=True, exist_ok=True)
    (REPO / _AGENTS).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _swarm(http: httpx.Client, hub: RunningServer, metadata: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": uuid.uuid4().hex,
                "role": "ROLE_USER",
                "parts": [{"text": "hello"}],
            },
            "metadata": {"skill": "swarm", **metadata},
        },
    }
    response = http.post(f"http://127.0.0.1:{hub.port}/", json=body, headers={"A2A-Version": "1.0"})
    task = response.json()["result"]["task"]
    if task["status"]["state"] != "TASK_STATE_COMPLETED":
        raise RuntimeError(f"swarm failed: {json.dumps(task['status'])[:300]}")
    report: dict[str, Any] = task["artifacts"][0]["parts"][1]["data"]
    return report


def _measure(
    http: httpx.Client, hub: RunningServer, metadata: dict[str, Any], branches: int
) -> tuple[float, float, dict[str, Any]]:
    cpu = hub.cpu_seconds()
    started = time.perf_counter()
    report = _swarm(http, hub, metadata)
    wall_ms = (time.perf_counter() - started) * 1e3
    time.sleep(0.3)  # work that trails the answer (commits, cancels) is charged to the swarm
    cpu_ms = (hub.cpu_seconds() - cpu) * 1e3 / branches
    return wall_ms, cpu_ms, report


def _cancels(http: httpx.Client, slow: RunningServer) -> int:
    counts = http.get(f"http://127.0.0.1:{slow.port}/_counts").json()
    return int(counts.get("CancelTask", 0))


def main(argv: list[str] | None = None) -> None:
    """Run the swarm benchmark and print Markdown tables of medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,200")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    exit_on_sigterm()
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    echo_t = Target(name="echo50", command=canned_command("--delay", "0.05"))
    fast_t = Target(name="fast", command=canned_command("--delay", "0.01", "--streaming"))
    slow_t = Target(name="slow", command=canned_command("--delay", "2", "--streaming", "--count"))
    hub_t = Target(name="hub", command=_hub, store=_STORE)
    broadcast: dict[int, list[tuple[float, float]]] = {size: [] for size in sizes}
    race: list[tuple[float, float, int, int]] = []
    try:
        with (
            start_server(echo_t, core=1, log_path=RESULTS / "swarm-echo.log") as echo,
            start_server(fast_t, core=1, log_path=RESULTS / "swarm-fast.log") as fast,
            start_server(slow_t, core=1, log_path=RESULTS / "swarm-slow.log") as slow,
        ):
            _write_agents(echo.port, fast.port, slow.port, max(sizes))
            with (
                start_server(hub_t, core=0, log_path=RESULTS / "swarm-hub.log") as hub,
                httpx.Client(timeout=60) as http,
            ):
                everyone = [f"b{i}" for i in range(max(sizes))]
                # Warm-up: every card read, every connection opened, not counted.
                _swarm(http, hub, {"agents": everyone, "concurrency": len(everyone)})
                _swarm(http, hub, {"strategy": "race", "tags": ["race"], "concurrency": 10})
                time.sleep(2.5)
                for round_no in range(1, args.rounds + 1):
                    for size in sizes:
                        wall, cpu, _ = _measure(
                            http, hub, {"agents": everyone[:size], "concurrency": size}, size
                        )
                        broadcast[size].append((wall, cpu))
                        print(
                            f"  round {round_no} broadcast {size:4}: {wall:7.1f} ms, "
                            f"{cpu:.3f} ms CPU/branch",
                            flush=True,
                        )
                    before = _cancels(http, slow)
                    wall, cpu, report = _measure(
                        http, hub, {"strategy": "race", "tags": ["race"], "concurrency": 10}, 10
                    )
                    time.sleep(0.5)
                    canceled = sum(1 for b in report["branches"] if b["state"] == "canceled")
                    received = _cancels(http, slow) - before
                    race.append((wall, cpu, canceled, received))
                    print(
                        f"  round {round_no} race: {wall:7.1f} ms, {canceled} canceled, "
                        f"{received} CancelTask received",
                        flush=True,
                    )
                    time.sleep(2.2)  # let the losers' 2 s replies drain before the next round
    except ServerStartError as exc:
        raise SystemExit(f"bench.swarm: {exc}") from None
    print()
    print(f"{args.rounds} rounds; medians (min to max)")
    print("| partners | swarm wall ms | over the 50 ms wait | hub CPU ms/branch |")
    print("| ---: | ---: | ---: | ---: |")
    for size in sizes:
        walls = [w for w, _ in broadcast[size]]
        print(
            f"| {size} | {spread(walls, 1)} | {spread([w - 50 for w in walls], 1)} "
            f"| {spread([c for _, c in broadcast[size]], 3)} |"
        )
    print()
    print("| race of 10 | wall ms | losers canceled (min of rounds) | CancelTask received (min) |")
    print("| --- | ---: | ---: | ---: |")
    print(
        f"| 1 x 10 ms, 9 x 2 s | {spread([r[0] for r in race], 1)} "
        f"| {min(r[2] for r in race)} | {min(r[3] for r in race)} |"
    )


if __name__ == "__main__":
    main()
