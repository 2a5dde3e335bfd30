"""Replicas on PostgreSQL: what one costs against SQLite, how fast an event crosses replicas,
and what 1, 2 and 3 replicas serve together.

    python -m bench.replicas                    # all three parts (about 3 minutes)
    python -m bench.replicas --parts latency    # one part: store, latency, scale

- `store`: SendMessage at c=16 on one hub with SQLite and one with PostgreSQL, interleaved
  rounds, the hub pinned to core 0 and the load to core 1 (PostgreSQL runs unpinned: on two
  cores it shares them). Server CPU per request is the hub's; the database's is measured
  apart, from its processes in /proc.
- `latency`: a skill on replica A reports 200 progress events 10 ms apart, each carrying the
  wall time it was reported at; a subscriber on replica B records when each arrives. The
  latency includes A's group commit, the NOTIFY, B's read of the event log and the SSE hop.
- `scale`: c=16 SendMessage spread over 1, 2 and 3 replicas (each load worker keeps to one
  replica), the total rate and the CPU per request of the hubs and of PostgreSQL.

The PostgreSQL server is a throw-away cluster made like the tests' (`tests/postgres.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import uvloop
from httpx_sse import connect_sse

from bench.load import LoadResult, run_load
from bench.target import REPO, RunningServer, Target, hub_command, pin_self, start_server

__all__ = ["main"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_LOGS = REPO / "var" / "bench-results"
_SETTINGS = """server: {{host: 127.0.0.1, port: 8000}}
store: {store}
skills:
  - builtin: echo
  - module: bench.replica_skill:clock
default_skill: echo
limits: {{max_tasks: 100000, max_contexts: 100000, task_ttl: 1h, max_streams_per_caller: 1000}}
"""


def _settings(folder: Path, name: str, store: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(_SETTINGS.format(store=store))
    return path


def _hub(name: str, config: Path, store: Path | None = None) -> Target:
    return Target(
        name=name,
        command=lambda port: hub_command(port, config=str(config), store=store),
        store=store,
    )


def _postgres_cpu(root: Path) -> float:
    """CPU seconds of every process of the cluster whose data is under `root`."""
    pid_file = root / "data" / "postmaster.pid"
    leader = int(pid_file.read_text().split()[0])
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(entry.name) == leader or int(fields[1]) == leader:
            total += int(fields[11]) + int(fields[12])
    return total / _CLOCK_TICKS


def _load(ports: Sequence[int], concurrency: int, duration: float) -> list[LoadResult]:
    """`concurrency` workers spread over `ports`, all at once."""
    shares = [concurrency // len(ports) + (i < concurrency % len(ports)) for i in range(len(ports))]

    async def together() -> list[LoadResult]:
        return list(
            await asyncio.gather(
                *(
                    run_load(port=port, concurrency=share, duration=duration)
                    for port, share in zip(ports, shares, strict=True)
                )
            )
        )

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(together())


@contextmanager
def _servers(
    targets: Sequence[Target], cores: Sequence[int | None]
) -> Iterator[list[RunningServer]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(
                start_server(target, core=core, log_path=_LOGS / f"replicas-{target.name}.log")
            )
            for target, core in zip(targets, cores, strict=True)
        ]


def _measure(
    servers: Sequence[RunningServer], root: Path | None, duration: float
) -> dict[str, float]:
    _load([server.port for server in servers], 16, 1.0)  # warm-up
    hub_before = sum(server.cpu_seconds() for server in servers)
    db_before = _postgres_cpu(root) if root else 0.0
    results = _load([server.port for server in servers], 16, duration)
    time.sleep(0.25)
    done = sum(result.completed for result in results)
    errors = sum(result.errors for result in results)
    elapsed = max(result.elapsed_s for result in results)
    hub_cpu = sum(server.cpu_seconds() for server in servers) - hub_before
    db_cpu = (_postgres_cpu(root) - db_before) if root else 0.0
    return {
        "requests_per_s": done / elapsed,
        "errors": errors,
        "p50_ms": statistics.median(result.p50_ms for result in results),
        "hub_cpu_ms_per_request": hub_cpu / done * 1000 if done else 0.0,
        "db_cpu_ms_per_request": db_cpu / done * 1000 if done else 0.0,
    }


def _median_of(rows: list[dict[str, float]]) -> dict[str, str]:
    keys = rows[0].keys()
    shown = {}
    for key in keys:
        values = [row[key] for row in rows]
        shown[key] = (
            f"{statistics.median(values):.3f} ({min(values):.3f} to {max(values):.3f})"
            if len(values) > 1
            else f"{values[0]:.3f}"
        )
    return shown


def part_store(
    folder: Path, dsn: str, root: Path, rounds: int, duration: float
) -> dict[str, object]:
    sqlite_file = Path("var/bench-replicas.db")
    sqlite = _hub("sqlite", _settings(folder, "sqlite", "{kind: sqlite}"), store=sqlite_file)
    postgres = _hub("postgres", _settings(folder, "postgres", f"{{kind: postgres, dsn: '{dsn}'}}"))
    rows: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgres": []}
    for round_no in range(rounds):
        for target in (sqlite, postgres):
            with _servers([target], [0]) as [server]:
                row = _measure([server], root if target is postgres else None, duration)
            rows[target.name].append(row)
            print(f"  round {round_no + 1} {target.name}: {json.dumps(row)}", flush=True)
    ratio = statistics.median(
        pg["requests_per_s"] / sq["requests_per_s"]
        for pg, sq in zip(rows["postgres"], rows["sqlite"], strict=True)
    )
    return {
        "sqlite": _median_of(rows["sqlite"]),
        "postgres": _median_of(rows["postgres"]),
        "postgres_over_sqlite": f"{ratio:.2f}",
    }


def part_latency(folder: Path, dsn: str, events: int) -> dict[str, object]:
    config = _settings(folder, "latency", f"{{kind: postgres, dsn: '{dsn}'}}")
    a, b = _hub("replica-a", config), _hub("replica-b", config)
    with _servers([a, b], [0, 1]) as [first, second]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "m1",
                    "role": "ROLE_USER",
                    "parts": [{"text": str(events)}],
                },
                "metadata": {"skill": "clock"},
                "configuration": {"returnImmediately": True},
            },
        }
        headers = {"A2A-Version": "1.0"}
        task = httpx.post(f"http://127.0.0.1:{first.port}/", json=body, headers=headers).json()
        task_id = task["result"]["task"]["id"]
        delays: list[float] = []
        subscribe = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SubscribeToTask",
            "params": {"id": task_id},
        }
        with (
            httpx.Client(timeout=60) as client,
            connect_sse(
                client, "POST", f"http://127.0.0.1:{second.port}/", json=subscribe, headers=headers
            ) as source,
        ):
            for sse in source.iter_sse():
                arrived = time.time()
                update = json.loads(sse.data)["result"].get("statusUpdate")
                if update is None:
                    continue
                parts = (update["status"].get("message") or {}).get("parts") or []
                text = parts[0].get("text", "") if parts else ""
                if text.startswith("at "):
                    delays.append((arrived - float(text[3:])) * 1000)
    delays.sort()
    return {
        "events": len(delays),
        "p50_ms": f"{delays[len(delays) // 2]:.2f}",
        "p99_ms": f"{delays[min(len(delays) - 1, int(len(delays) * 0.99))]:.2f}",
        "max_ms": f"{delays[-1]:.2f}",
    }


def part_scale(folder: Path, dsn: str, root: Path, duration: float) -> dict[str, object]:
    config = _settings(folder, "scale", f"{{kind: postgres, dsn: '{dsn}'}}")
    found: dict[str, object] = {}
    for count in (1, 2, 3):
        targets = [_hub(f"scale-{n}", config) for n in range(count)]
        with _servers(targets, [None] * count) as servers:
            found[f"{count} replica(s)"] = {
                key: f"{value:.3f}" for key, value in _measure(servers, root, duration).items()
            }
        print(f"  {count} replica(s): {found[f'{count} replica(s)']}", flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="store,latency,scale")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--events", type=int, default=200)
    args = parser.parse_args(argv)
    from tests.postgres import fresh_database_for_processes, running_cluster

    parts = args.parts.split(",")
    report: dict[str, object] = {"cores": len(os.sched_getaffinity(0))}
    with running_cluster() as cluster, tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if "store" in parts:
            cores = os.sched_getaffinity(0)
            pin_self(1)
            with fresh_database_for_processes(cluster) as dsn:
                report["store"] = part_store(folder, dsn, cluster.root, args.rounds, args.duration)
            os.sched_setaffinity(0, cores)
        if "latency" in parts:
            with fresh_database_for_processes(cluster) as dsn:
                report["latency"] = part_latency(folder, dsn, args.events)
        if "scale" in parts:
            with fresh_database_for_processes(cluster) as dsn:
                report["scale"] = part_scale(folder, dsn, cluster.root, args.duration)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
