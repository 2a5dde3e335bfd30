"""Servers under benchmark: how to start each one pinned to a core, wait for it, read its costs."""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from bench.load import LoadResult, run_load_sync

__all__ = [
    "REPO",
    "TARGETS",
    "RunningServer",
    "ServerStartError",
    "Target",
    "add_run_arguments",
    "baseline_target",
    "canned_command",
    "cpu_seconds",
    "exit_on_sigterm",
    "free_port",
    "hub_command",
    "hub_rounds",
    "pin_self",
    "start_server",
    "write_partner_agents",
]

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
_HUB_STORE = Path("var/bench-hub.db")
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of all of process `pid`'s threads so far, from /proc/<pid>/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


# Seconds to let a server finish work that trails its last response (task clean-up, store
# writes) before its CPU is read, so that work is charged to the requests that caused it.
_SETTLE = 0.25


class ServerStartError(RuntimeError):
    """A server exited or did not answer its card URL in time."""

    def __init__(self, summary: str, log_tail: str) -> None:
        super().__init__(f"{summary}\n{log_tail}" if log_tail else summary)
        self.summary = summary
        self.log_tail = log_tail


def hub_command(
    port: int,
    *,
    config: str = "bench/hub.yaml",
    store: Path | None = _HUB_STORE,
    extra: Sequence[str] = (),
    python: Path | None = None,
) -> list[str]:
    """`a2a-hub serve` on `port` with a benchmark's settings file and SQLite store (None:
    the store the settings file names), plus `extra`; from the environment of `python` (None:
    this one)."""
    interpreter = python or Path(sys.executable)
    # The console script is what users run; `python -m hub` covers an install without scripts.
    script = interpreter.with_name("a2a-hub")
    launcher = [str(script)] if script.exists() else [str(interpreter), "-m", "hub"]
    return [
        *launcher,
        "serve",
        "--config",
        config,
        "--port",
        str(port),
        *(["--store", str(store)] if store is not None else []),
        # uvicorn's log level, as the reference's; the settings hold only the benchmark's keys.
        "--log-level",
        "warning",
        *extra,
    ]


def baseline_target(
    checkout: Path,
    *,
    config: str = "bench/hub.yaml",
    store: Path = Path("var/bench-baseline.db"),
    extra: Sequence[str] = (),
) -> Target:
    """The hub of another checkout of a2a-hub (its own `.venv`, e.g. a `git worktree` of an
    earlier commit), named `baseline`: measured beside this checkout's hub in the same run, a
    change's before and after. It reads this checkout's settings file and keeps its own store.

    Raises:
        SystemExit: the checkout has no `.venv/bin/python`.
    """
    python = checkout.resolve() / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"--baseline {checkout}: no {python}; run `make install` there first")

    def command(port: int) -> list[str]:
        return hub_command(port, config=config, store=store, extra=extra, python=python)

    return Target(name="baseline", command=command, store=store)


def _reference_command(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.reference_agent", "--port", str(port)]


def write_partner_agents(path: Path, partner_port: int) -> None:
    """Write an agents.yaml (relative to the repository) listing one partner, `partner`, on
    loopback at `partner_port`."""
    (REPO / path).parent.mkdir(parents=True, exist_ok=True)
    (REPO / path).write_text(
        f"version: 1\nagents:\n  - name: partner\n    url: http://127.0.0.1:{partner_port}\n",
        encoding="utf-8",
    )


def _litestar_echo_command(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.litestar_echo", "--port", str(port)]


def canned_command(*flags: str) -> Callable[[int], list[str]]:
    """The command of a `bench.canned_server` on a given port, with `flags`."""

    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "bench.canned_server", "--port", str(port), *flags]

    return command


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A server the harness can start: its command line and the files it keeps."""

    name: str
    command: Callable[[int], list[str]]
    store: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    """Added to the environment the server starts with."""
    traces: bool = False
    """It exports traces: the harness runs a local OTLP receiver for it (`bench.otlp_sink`)
    and passes its URL in `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`."""
    card_path: str = "/.well-known/agent-card.json"
    rpc_path: str = "/"

    def clear_store(self) -> None:
        """Remove the store file and its SQLite side files, so each start begins empty."""
        if self.store is None:
            return
        for suffix in ("", "-wal", "-shm", "-journal"):
            (REPO / f"{self.store}{suffix}").unlink(missing_ok=True)


TARGETS: dict[str, Target] = {
    "reference": Target(name="reference", command=_reference_command),
    "hub": Target(name="hub", command=hub_command, store=_HUB_STORE),
    # A bare Litestar JSON echo: what a request costs on this stack with no A2A work.
    "litestar-echo": Target(name="litestar-echo", command=_litestar_echo_command),
    # Not a real agent: replies from memory, to show the harness's own ceiling.
    "canned": Target(name="canned", command=canned_command()),
    # The telemetry comparison: "hub" is the default (metrics on, traces off).
    "hub-off": Target(
        name="hub-off",
        command=hub_command,
        store=_HUB_STORE,
        env={"HUB_TELEMETRY__METRICS__ENABLED": "false", "HUB_TELEMETRY__ACCESS_LOG": "false"},
    ),
    "hub-traces": Target(
        name="hub-traces",
        command=hub_command,
        store=_HUB_STORE,
        env={"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SERVICE_NAME": "a2a-hub-bench"},
        traces=True,
    ),
    # The same, recording one trace in ten (the rest cost a sampling decision only).
    "hub-traces-10": Target(
        name="hub-traces-10",
        command=hub_command,
        store=_HUB_STORE,
        env={
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_SERVICE_NAME": "a2a-hub-bench",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "0.1",
        },
        traces=True,
    ),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RunningServer:
    """A started server process and how to reach it."""

    target: Target
    process: subprocess.Popen[bytes]
    port: int

    @property
    def pid(self) -> int:
        """Process id; `taskset` execs the server, so it is the server's own."""
        return self.process.pid

    def cpu_seconds(self) -> float:
        """User + system CPU of all the server's threads so far."""
        return cpu_seconds(self.pid)

    def load(self, **load: Any) -> tuple[LoadResult, float]:
        """One `run_load_sync` against this server (`load` gives all but the port), and the
        CPU seconds the server spent on it, read once its last answers have settled."""
        before = self.cpu_seconds()
        result = run_load_sync(port=self.port, **load)
        time.sleep(_SETTLE)
        return result, self.cpu_seconds() - before

    def rss_bytes(self) -> int:
        """Resident set size, from VmRSS in /proc/<pid>/status."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"{self.target.name}: no VmRSS for pid {self.pid}")


def pin_self(core: int) -> bool:
    """Pin this process to one core; False when the machine does not have that core."""
    if core not in os.sched_getaffinity(0):
        return False
    os.sched_setaffinity(0, {core})
    return True


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so `finally` blocks stop the servers this process started."""

    def _raise(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _raise)


def _die_with_parent() -> None:
    # Runs in the child between fork and exec, and survives the exec: if the harness is killed
    # outright (SIGKILL), the kernel kills the server too instead of leaving it pinned to core 0.
    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def free_port() -> int:
    # Bind, read, release: a tiny race with other programs, acceptable on a bench machine.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _log_tail(log_path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log_path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _wait_ready(server: RunningServer, log_path: Path, timeout: float) -> None:
    """Poll the card URL until it answers 200, the process exits, or `timeout` passes."""
    url = f"http://127.0.0.1:{server.port}{server.target.card_path}"
    deadline = time.monotonic() + timeout
    with httpx.Client(trust_env=False, timeout=1.0) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                tail = _log_tail(log_path)
                last = tail.splitlines()[-1] if tail else "no output"
                raise ServerStartError(
                    f"exited with code {server.process.returncode} before it was ready"
                    f" ({last}; log {os.path.relpath(log_path, REPO)})",
                    tail,
                )
            with contextlib.suppress(httpx.HTTPError):
                if client.get(url).status_code == 200:
                    return
            time.sleep(0.1)
    raise ServerStartError(
        f"did not answer {url} within {timeout:.0f} s (log {os.path.relpath(log_path, REPO)})",
        _log_tail(log_path),
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the server has not exited after a few seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


@contextlib.contextmanager
def start_server(
    target: Target,
    *,
    core: int | None,
    log_path: Path,
    startup_timeout: float = 30.0,
) -> Iterator[RunningServer]:
    """Start `target` on a free loopback port, pinned to `core`; always stopped on exit."""
    target.clear_store()
    port = free_port()
    command = target.command(port)
    if core is not None:
        command = ["taskset", "-c", str(core), *command]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env={**os.environ, **target.env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
    server = RunningServer(target=target, process=process, port=port)
    try:
        _wait_ready(server, log_path, startup_timeout)
        yield server
    finally:
        _stop(process)


Figure = TypeVar("Figure")


def add_run_arguments(
    parser: argparse.ArgumentParser, *, concurrency: str, duration: float
) -> None:
    """The options of a benchmark of rounds against a hub: --concurrency (a comma-separated
    list), --duration, --warmup and --rounds."""
    parser.add_argument("--concurrency", default=concurrency)
    parser.add_argument("--duration", type=float, default=duration, help="seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds, not counted")
    parser.add_argument("--rounds", type=int, default=3)


def hub_rounds(
    program: str,
    partner: Target,
    hubs: Sequence[Target],
    *,
    agents: Path,
    rounds: int,
    measure: Callable[[RunningServer, RunningServer, int], list[Figure]],
) -> list[Figure]:
    """Rounds against hubs in front of one partner: this process on core 1, `partner` started
    there and named `partner` in `agents`, then for each round a fresh hub of each of `hubs`
    on core 0 in turn (their order alternating from round to round, so a drift of the machine
    lands on all of them) and what `measure(partner, hub, round)` found. A server that does
    not start ends the program with the tail of its log."""
    exit_on_sigterm()
    if not pin_self(1):
        print("warning: cannot pin to core 1; figures mean little", file=sys.stderr)
    found: list[Figure] = []
    try:
        with start_server(
            partner, core=1, log_path=RESULTS / f"{program}-partner.log"
        ) as running_partner:
            write_partner_agents(agents, running_partner.port)
            for round_no in range(1, rounds + 1):
                print(f"round {round_no}/{rounds}", flush=True)
                turn = hubs if round_no % 2 else tuple(reversed(hubs))
                for hub in turn:
                    log_path = RESULTS / f"{program}-{hub.name}-{round_no}.log"
                    with start_server(hub, core=0, log_path=log_path) as running_hub:
                        found += measure(running_partner, running_hub, round_no)
    except ServerStartError as exc:
        raise SystemExit(f"bench.{program}: {exc}") from None
    return found
