"""The hub's orchestrator: what it adds per step of a plan, beside Microsoft Agent Framework.

A plan is what one SendMessage to an orchestrator sets going: model calls and tool calls
until the model answers. Both sides run the same plans against the same scripted model
server (`bench.scripted_model`: `hub.testing.model_server`'s OpenAI-compatible server in a
process of its own, answering each turn after a fixed delay: 0 ms, and 200 ms as a fast
hosted model) and the same instant partner (`bench.canned_server`, which answers from
memory):

- `hub`: a hub serving an orchestrator skill (`planner`, settings written to
  `var/bench-orchestrator-sqlite.yaml` with the model server's URL), its partner listed in an
  agents file; the plan's journal persisted after every step (SQLite store, the default);
- `hub-memory`: the same on the memory store, so the journal is kept in memory only: what
  the durability costs;
- `maf`: Microsoft Agent Framework (`bench/orchestrator_maf.py`): an `Agent` on its OpenAI
  Chat Completions client with the partner as `A2AAgent.as_tool()`, served over A2A by its
  `A2AExecutor`; installed in its own environment, `bench/.venv-maf` (`--install`).

The script of a plan of N calls: `sequential` (the default) is N model turns of one tool call
each, then a turn that answers: 2N + 1 steps (N + 1 model calls, N tool calls);
`parallel` is one turn of N calls at once, then the answer: N + 2 steps. The plan is named in
the message's text (`plan 4 sequential 0.2`), which the scripted model reads, so both sides
get the same turns (the hub streams each model answer, Agent Framework's client asks for it
whole: each side as it does by default).

Measured, for each side, delay, shape and N, one plan at a time:
- added ms per plan: the wall time the client saw (p50 over the plans), less the model's
  scripted delays, less the model server's and the partner's own CPU on the plan's path
  (read from /proc as the server's is, per model turn and per partner call);
- added ms per step: that divided by the plan's steps;
- CPU ms per step: the server process's CPU (utime + stime from /proc, all its threads)
  over the plans, divided by their steps.

And 100 plans at once (`--concurrent`, each of 4 sequential calls against the 200 ms model):
whether all complete, the p50 and p99 added time, CPU per step.

The servers are pinned to core 0 (one at a time); this process, the model server and the
partner to core 1. The sides are interleaved round by round (their order rotating) and each
figure is the median over rounds with the min and max.

    python -m bench.orchestrator [--rounds 3] [--delays 0,0.2] [--calls 1,4,16]
                                 [--shapes sequential] [--targets hub,hub-memory,maf]
                                 [--steps 200] [--concurrent 100] [--install]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio
import httpx

from bench.spread import spread
from bench.target import (
    REPO,
    RESULTS,
    RunningServer,
    ServerStartError,
    Target,
    canned_command,
    exit_on_sigterm,
    hub_command,
    pin_self,
    start_server,
    write_partner_agents,
)

__all__ = ["MAF_PYTHON", "main"]

MAF_PYTHON = REPO / "bench" / ".venv-maf" / "bin" / "python"
_MAF_PACKAGES = (
    "agent-framework-a2a",
    "agent-framework-openai",
    "a2a-sdk[http-server]",
    "uvicorn[standard]",
)
_AGENTS = Path("var/bench-orchestrator-agents.yaml")
_STORE = Path("var/bench-orchestrator.db")
_SETTLE = 0.25
_CONCURRENT_CALLS = 4
_CONCURRENT_DELAY = 0.2


# -- the plans -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    calls: int
    shape: str
    delay: float

    @property
    def text(self) -> str:
        return f"plan {self.calls} {self.shape} {self.delay:g}"

    @property
    def turns(self) -> int:
        return self.calls + 1 if self.shape == "sequential" else 2

    @property
    def steps(self) -> int:
        return self.turns + self.calls

    @property
    def partner_calls_on_path(self) -> int:
        """Partner calls one after another on the plan's path (parallel ones overlap)."""
        return self.calls if self.shape == "sequential" else 1


# -- the servers -------------------------------------------------------------------------------


def _hub_settings(model_url: str, store: str) -> str:
    store_lines = f"  kind: sqlite\n  path: {_STORE}\n" if store == "sqlite" else "  kind: memory\n"
    return f"""\
# Written by bench.orchestrator for one run: the scripted model server's URL changes.
server:
  host: 127.0.0.1
  port: 8000
store:
{store_lines}models:
  scripted:
    provider: openai
    model: scripted
    base_url: {model_url}
    api_key: "${{BENCH_MODEL_KEY}}"
    timeout: 60s
skills:
  - orchestrator:
      id: planner
      description: Plans with the partner agent
      model: scripted
      instructions: "You plan with the partner agent: call it as the plan needs, then answer."
      tools: {{agents: [partner]}}
      limits: {{steps: 64, tool_calls: 64, tokens: 10000000, wall_time: 10m}}
default_skill: planner
limits:
  max_tasks: 100000
  max_contexts: 100000
  task_ttl: 1h
  max_body: 1MiB
  max_streams_per_caller: 1000
"""


def _targets(
    names: Sequence[str], model_url: str, partner_port: int, profile: bool
) -> list[Target]:
    targets = []
    for name in names:
        if name in ("hub", "hub-memory"):
            store = "sqlite" if name == "hub" else "memory"
            config = Path(f"var/bench-orchestrator-{store}.yaml")
            (REPO / config).parent.mkdir(parents=True, exist_ok=True)
            (REPO / config).write_text(_hub_settings(model_url, store), encoding="utf-8")

            def command(
                port: int, config: Path = config, store: str = store, name: str = name
            ) -> list[str]:
                line = hub_command(
                    port,
                    config=str(config),
                    store=_STORE if store == "sqlite" else None,
                    extra=["--agents", str(_AGENTS)],
                )
                if not profile:
                    return line
                # The same arguments, under cProfile (`bench.profiled`).
                return [sys.executable, "-m", "bench.profiled", str(_profile(name)), *line[1:]]

            targets.append(
                Target(
                    name=name,
                    command=command,
                    store=_STORE if store == "sqlite" else None,
                    env={"BENCH_MODEL_KEY": "bench"},
                )
            )
        elif name == "maf":

            def maf(port: int) -> list[str]:
                return [
                    str(MAF_PYTHON),
                    "-m",
                    "bench.orchestrator_maf",
                    "--port",
                    str(port),
                    "--model-url",
                    model_url,
                    "--partner-url",
                    f"http://127.0.0.1:{partner_port}/",
                ]

            targets.append(Target(name="maf", command=maf))
        else:
            raise SystemExit(f"unknown target {name!r} (known: hub, hub-memory, maf)")
    return targets


def _profile(target: str) -> Path:
    return RESULTS / f"orchestrator-{target}.prof"


def _print_profile(target: str, top: int = 30) -> None:
    """The functions `target` spent most CPU in, by own time and by cumulative time."""
    import pstats

    path = _profile(target)
    if not path.exists():
        return
    print(f"\n{target}: CPU profile ({path.relative_to(REPO)}), by own time")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(top)
    print(f"{target}: by cumulative time")
    stats.sort_stats("cumulative").print_stats(top)


def _model_command(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.scripted_model", "--port", str(port)]


def _install() -> None:
    """Make `bench/.venv-maf` with Agent Framework in it (never the project's environment)."""
    if not MAF_PYTHON.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MAF_PYTHON.parent.parent)], check=True)
    subprocess.run([str(MAF_PYTHON), "-m", "pip", "install", "-q", *_MAF_PACKAGES], check=True)


# -- the client --------------------------------------------------------------------------------


async def _send(http: httpx.AsyncClient, url: str, text: str) -> float | None:
    """One SendMessage; the seconds until its answer, or None when the task did not
    complete."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
        },
    }
    started = time.perf_counter()
    try:
        response = await http.post(url, json=body, headers={"A2A-Version": "1.0"})
    except httpx.TransportError as exc:
        print(f"    failed: {type(exc).__name__} {exc}", flush=True)
        return None
    elapsed = time.perf_counter() - started
    try:
        task = response.json()["result"]["task"]
    except (ValueError, KeyError, TypeError):
        print(f"    failed: HTTP {response.status_code} {response.text[:300]}", flush=True)
        return None
    state = task["status"]["state"]
    if state != "TASK_STATE_COMPLETED":
        print(f"    failed: {state} {json.dumps(task['status'])[:300]}", flush=True)
        return None
    return elapsed


# -- the measurements --------------------------------------------------------------------------


class _ServerGone(RuntimeError):
    """The server under measurement exited (on this shared machine, something else may end
    it): its round is measured again on a fresh server."""


@dataclass(frozen=True, slots=True)
class _Sides:
    """The model server and the partner, whose own CPU is taken out of the added time."""

    model: RunningServer
    partner: RunningServer


@dataclass(frozen=True, slots=True)
class _Cell:
    target: str
    round: int
    delay: float
    shape: str
    calls: int
    steps: int
    plans: int
    failed: int
    added_ms: float
    """p50 over the plans of the added wall time of one plan."""
    added_p99_ms: float
    cpu_ms_per_step: float
    model_ms_per_turn: float
    """The model server's CPU per model call (taken out of the added time)."""
    partner_ms_per_call: float
    """The partner's CPU per call (taken out of the added time)."""
    wall_s: float
    concurrent: int = 1


def _nearest_rank(values: Sequence[float], q: float) -> float:
    return values[max(0, math.ceil(q * len(values)) - 1)] if values else math.nan


async def _measure(
    http: httpx.AsyncClient,
    server: RunningServer,
    sides: _Sides,
    plan: _Plan,
    plans: int,
    round_no: int,
    concurrent: int = 1,
) -> _Cell:
    """`plans` plans, one after another or `concurrent` at once (then `plans` of them)."""
    url = f"http://127.0.0.1:{server.port}/"
    walls: list[float] = []
    before = (server.cpu_seconds(), sides.model.cpu_seconds(), sides.partner.cpu_seconds())
    started = time.perf_counter()
    if concurrent <= 1:
        results = [await _send(http, url, plan.text) for _ in range(plans)]
    else:
        results = []

        async def one() -> None:
            results.append(await _send(http, url, plan.text))

        async with anyio.create_task_group() as group:
            for _ in range(plans):
                group.start_soon(one)
    wall_s = time.perf_counter() - started
    code = server.process.poll()
    if code is not None:
        raise _ServerGone(f"{server.target.name} exited with code {code} during a measurement")
    await anyio.sleep(_SETTLE)
    cpu, model_cpu, partner_cpu = (
        server.cpu_seconds() - before[0],
        sides.model.cpu_seconds() - before[1],
        sides.partner.cpu_seconds() - before[2],
    )
    walls = [wall for wall in results if wall is not None]
    model_per_turn = model_cpu / (plans * plan.turns)
    partner_per_call = partner_cpu / (plans * plan.calls) if plan.calls else 0.0
    # What the plan waits for that is not the server's: the scripted delays, and the model
    # server's and the partner's own work on the plan's path.
    fixed = plan.turns * (plan.delay + model_per_turn) + (
        plan.partner_calls_on_path * partner_per_call
    )
    added = sorted((wall - fixed) * 1e3 for wall in walls)
    return _Cell(
        target=server.target.name,
        round=round_no,
        delay=plan.delay,
        shape=plan.shape,
        calls=plan.calls,
        steps=plan.steps,
        plans=plans,
        failed=len(results) - len(walls),
        added_ms=statistics.median(added) if added else math.nan,
        added_p99_ms=_nearest_rank(added, 0.99),
        cpu_ms_per_step=cpu * 1e3 / (plans * plan.steps),
        model_ms_per_turn=model_per_turn * 1e3,
        partner_ms_per_call=partner_per_call * 1e3,
        wall_s=wall_s,
        concurrent=concurrent,
    )


async def _rounds(args: argparse.Namespace) -> list[_Cell]:
    cells: list[_Cell] = []
    partner_t = Target(name="partner", command=canned_command())
    model_t = Target(name="model", command=_model_command, card_path="/v1/models")
    limits = httpx.Limits(max_connections=args.concurrent + 10, max_keepalive_connections=200)
    async with httpx.AsyncClient(trust_env=False, timeout=300, limits=limits) as http:
        with (
            start_server(model_t, core=1, log_path=RESULTS / "orchestrator-model.log") as model,
            start_server(
                partner_t, core=1, log_path=RESULTS / "orchestrator-partner.log"
            ) as partner,
        ):
            write_partner_agents(_AGENTS, partner.port)
            sides = _Sides(model=model, partner=partner)
            targets = _targets(
                args.targets, f"http://127.0.0.1:{model.port}/v1", partner.port, args.profile
            )
            for round_no in range(1, args.rounds + 1):
                print(f"round {round_no}/{args.rounds}", flush=True)
                turn = round_no - 1
                order = targets[turn % len(targets) :] + targets[: turn % len(targets)]
                for target in order:
                    cells += await _target_round(http, target, sides, args, round_no)
    return cells


async def _target_round(
    http: httpx.AsyncClient,
    target: Target,
    sides: _Sides,
    args: argparse.Namespace,
    round_no: int,
    attempts: int = 3,
) -> list[_Cell]:
    """One round of `target` on a fresh server; again on another if the server exits."""
    log_path = RESULTS / f"orchestrator-{target.name}-{round_no}.log"
    for attempt in range(1, attempts + 1):
        try:
            with start_server(target, core=0, log_path=log_path) as server:
                return await _measure_all(http, server, sides, args, round_no)
        except _ServerGone as exc:
            print(f"  {exc} (attempt {attempt} of {attempts})", flush=True)
    print(f"  {target.name}: round {round_no} left out", flush=True)
    return []


async def _measure_all(
    http: httpx.AsyncClient,
    server: RunningServer,
    sides: _Sides,
    args: argparse.Namespace,
    round_no: int,
) -> list[_Cell]:
    url = f"http://127.0.0.1:{server.port}/"
    # Warm-up, not counted: imports, connections, the store file, the partner's card.
    for calls in args.calls:
        for _ in range(3):
            await _send(http, url, _Plan(calls, "sequential", 0).text)
    if args.concurrent:
        warm = _Plan(_CONCURRENT_CALLS, "sequential", 0)
        await _measure(http, server, sides, warm, args.concurrent, 0, args.concurrent)
    cells = []
    for delay in args.delays:
        for shape in args.shapes:
            for calls in args.calls:
                plan = _Plan(calls, shape, delay)
                plans = max(args.min_plans, math.ceil(args.steps / plan.steps))
                cell = await _measure(http, server, sides, plan, plans, round_no)
                print(
                    f"  {server.target.name:10} {delay * 1e3:4.0f} ms {shape:10} {calls:2} calls:"
                    f" {plans:3} plans, added {cell.added_ms:7.2f} ms/plan "
                    f"({cell.added_ms / plan.steps:5.2f} ms/step), CPU "
                    f"{cell.cpu_ms_per_step:5.2f} ms/step (model server "
                    f"{cell.model_ms_per_turn:.2f} ms/turn, partner "
                    f"{cell.partner_ms_per_call:.2f} ms/call), failed {cell.failed}",
                    flush=True,
                )
                cells.append(cell)
    if args.concurrent:
        plan = _Plan(_CONCURRENT_CALLS, "sequential", _CONCURRENT_DELAY)
        cell = await _measure(http, server, sides, plan, args.concurrent, round_no, args.concurrent)
        print(
            f"  {server.target.name:10} {args.concurrent} at once: {cell.plans - cell.failed}/"
            f"{cell.plans} completed in {cell.wall_s:.2f} s, added p50 {cell.added_ms:.1f} ms "
            f"p99 {cell.added_p99_ms:.1f} ms, CPU {cell.cpu_ms_per_step:.2f} ms/step",
            flush=True,
        )
        cells.append(cell)
    return cells


# -- the report --------------------------------------------------------------------------------


def _report(cells: list[_Cell], args: argparse.Namespace) -> str:
    single = [c for c in cells if c.concurrent == 1]
    names = list(dict.fromkeys(c.target for c in cells))

    def pick(target: str, delay: float, shape: str, calls: int) -> list[_Cell]:
        return [
            c
            for c in single
            if c.target == target and c.delay == delay and c.shape == shape and c.calls == calls
        ]

    lines = [
        "| model delay | shape | calls | steps | target | added ms/plan | added ms/step "
        "| CPU ms/step | failed |",
        "| ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for delay in args.delays:
        for shape in args.shapes:
            for calls in args.calls:
                for name in names:
                    mine = pick(name, delay, shape, calls)
                    if not mine:
                        continue
                    steps = mine[0].steps
                    lines.append(
                        f"| {delay * 1e3:g} ms | {shape} | {calls} | {steps} | {name} "
                        f"| {spread([c.added_ms for c in mine])} "
                        f"| {spread([c.added_ms / steps for c in mine])} "
                        f"| {spread([c.cpu_ms_per_step for c in mine])} "
                        f"| {sum(c.failed for c in mine)} |"
                    )
    ratios = []

    def ratio_rows(top: str, bottom: str, label: str) -> None:
        for delay in args.delays:
            for shape in args.shapes:
                for calls in args.calls:
                    upper = {c.round: c for c in pick(top, delay, shape, calls)}
                    lower = {c.round: c for c in pick(bottom, delay, shape, calls)}
                    both = sorted(set(upper) & set(lower))
                    if not both:
                        continue
                    cpu = [upper[r].cpu_ms_per_step / lower[r].cpu_ms_per_step for r in both]
                    added = [upper[r].added_ms - lower[r].added_ms for r in both]
                    ratios.append(
                        f"| {label} | {delay * 1e3:g} ms | {shape} | {calls} "
                        f"| {spread(cpu)} | {spread(added)} |"
                    )

    if "hub" in names and "maf" in names:
        ratio_rows("hub", "maf", "hub / maf")
    if "hub" in names and "hub-memory" in names:
        ratio_rows("hub", "hub-memory", "hub / hub-memory")
    if ratios:
        lines += [
            "",
            "| ratio | model delay | shape | calls | CPU per step | added ms/plan, difference |",
            "| --- | ---: | --- | ---: | ---: | ---: |",
            *ratios,
        ]
    crowd = [c for c in cells if c.concurrent > 1]
    if crowd:
        lines += [
            "",
            f"{args.concurrent} plans at once, each of {_CONCURRENT_CALLS} sequential calls, "
            f"{_CONCURRENT_DELAY * 1e3:g} ms model:",
            "",
            "| target | completed | wall s | added p50 ms | added p99 ms | CPU ms/step |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name in names:
            mine = [c for c in crowd if c.target == name]
            if not mine:
                continue
            done = sum(c.plans - c.failed for c in mine)
            lines.append(
                f"| {name} | {done}/{sum(c.plans for c in mine)} "
                f"| {spread([c.wall_s for c in mine])} "
                f"| {spread([c.added_ms for c in mine], 1)} "
                f"| {spread([c.added_p99_ms for c in mine], 1)} "
                f"| {spread([c.cpu_ms_per_step for c in mine])} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the rounds and print Markdown tables of medians with the min and max."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="hub,hub-memory,maf")
    parser.add_argument("--delays", default="0,0.2", help="seconds per model turn")
    parser.add_argument("--calls", default="1,4,16", help="tool calls per plan")
    parser.add_argument("--shapes", default="sequential", help="sequential, parallel")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--steps", type=int, default=200, help="at least this many steps per measurement"
    )
    parser.add_argument("--min-plans", type=int, default=5, help="at least this many plans")
    parser.add_argument(
        "--concurrent", type=int, default=100, help="plans at once on one server (0: skip)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run the hubs under cProfile (CPU time) and print where it went; the figures "
        "then include the profiler's own cost",
    )
    parser.add_argument(
        "--install", action="store_true", help=f"make {MAF_PYTHON.parent.parent} first"
    )
    args = parser.parse_args(argv)
    args.targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    args.delays = [float(d) for d in args.delays.split(",")]
    args.calls = [int(c) for c in args.calls.split(",")]
    args.shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    for shape in args.shapes:
        if shape not in ("sequential", "parallel"):
            parser.error(f"unknown shape {shape!r} (known: sequential, parallel)")
    if args.install:
        _install()
    if "maf" in args.targets and not MAF_PYTHON.exists():
        raise SystemExit(
            f"bench.orchestrator: no {MAF_PYTHON.relative_to(REPO)}; run with --install "
            "(or leave maf out of --targets)"
        )
    exit_on_sigterm()
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    try:
        cells = anyio.run(_rounds, args, backend_options={"use_uvloop": True})
    except ServerStartError as exc:
        raise SystemExit(f"bench.orchestrator: {exc}") from None
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "orchestrator.json").write_text(
        json.dumps([asdict(c) for c in cells], indent=2), encoding="utf-8"
    )
    single = [c for c in cells if c.concurrent == 1]
    print()
    print(
        f"{args.rounds} rounds; medians (min to max). Taken out of the added time: the model "
        f"server's CPU, {spread([c.model_ms_per_turn for c in single])} ms a turn, and the "
        f"partner's, {spread([c.partner_ms_per_call for c in single])} ms a call"
    )
    print(_report(cells, args))
    if args.profile:
        for target in args.targets:
            if target != "maf":
                _print_profile(target)


if __name__ == "__main__":
    main()
