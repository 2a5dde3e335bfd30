"""How fast the command starts: `a2a-hub --help`, `--version`, two client commands, and
`a2a-hub serve` until its first agent card is served, beside the reference agent's.

    python -m bench.startup                        # 7 runs of each, interleaved
    python -m bench.startup --runs 15
    python -m bench.startup --also /path/to/other  # and the hub of another source tree

Each figure is a whole process, as a user meets it: wall time from spawn to exit (to the
first card answered with 200, for a server) and the CPU it used (user + system, of the
process and its children, from the kernel's accounting). The runs of all commands are
interleaved (one of each, then the next round), so a machine that slows down mid-run slows
every column alike; the table gives min, median and max. The client commands talk to a hub
this script starts once (echo skill, memory store) and leaves idle between runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.target import REPO, exit_on_sigterm

__all__ = ["main"]

_CARD = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


@dataclass
class Figures:
    """The wall and CPU seconds of every run of one command."""

    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def row(self) -> str:
        def spread(values: list[float]) -> str:
            return (
                f"{statistics.median(values):.3f} ({min(values):.3f} to {max(values):.3f})"
                if values
                else "-"
            )

        return f"| {self.name} | {spread(self.wall)} | {spread(self.cpu)} |"


def _hub() -> list[str]:
    script = Path(sys.executable).with_name("a2a-hub")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hub"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _card_answers(port: int) -> bool:
    """One bare HTTP request for the card: True on a 200 (a raw socket, so that polling costs
    the measured server as little as possible)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(_CARD)
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def run_command(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of a command that exits by itself."""
    cpu, start = _children_cpu(), time.perf_counter()
    quiet = subprocess.DEVNULL
    subprocess.run(argv, cwd=REPO, env=env, stdout=quiet, stderr=quiet, check=False)
    return time.perf_counter() - start, _children_cpu() - cpu


def run_server(
    command: Callable[[int], list[str]], env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Wall seconds from spawn to the first card served, and the server's CPU until then."""
    port = _free_port()
    with tempfile.TemporaryFile() as said:
        start = time.perf_counter()
        process = subprocess.Popen(
            command(port), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=said
        )
        try:
            while not _card_answers(port):
                if process.poll() is not None:
                    said.seek(0)
                    raise RuntimeError(
                        f"{command(port)} exited with {process.returncode}: "
                        + said.read().decode(errors="replace")
                    )
                time.sleep(0.005)
            wall = time.perf_counter() - start
            stat = Path(f"/proc/{process.pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        finally:
            process.terminate()
            process.wait(timeout=10)
    return wall, cpu


@contextlib.contextmanager
def _idle_hub() -> Iterator[str]:
    """A hub for the client commands to talk to, stopped on exit."""
    port = _free_port()
    process = subprocess.Popen(
        [*_hub(), "serve", "--config", "bench/hub.yaml", "--store", "memory", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not _card_answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the hub for the client commands did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


def _reference(port: int) -> list[str]:
    return [sys.executable, "-m", "bench.reference_agent", "--port", str(port)]


def _commands_of(
    hub: list[str], url: str, label: str, env: dict[str, str] | None
) -> dict[str, Callable[[], tuple[float, float]]]:
    """The measured commands of one source tree (`env` names it on PYTHONPATH)."""

    def serve(port: int) -> list[str]:
        flags = ["--store", "memory", "--log-level", "warning", "--port", str(port)]
        return [*hub, "serve", "--config", "bench/hub.yaml", *flags]

    tasks = [*hub, "tasks", "list", "--url", url, "--page-size", "1"]
    return {
        f"`a2a-hub --help`{label}": lambda: run_command([*hub, "--help"], env),
        f"`a2a-hub --version`{label}": lambda: run_command([*hub, "--version"], env),
        f"`a2a-hub send URL hi`{label}": lambda: run_command([*hub, "send", url, "hi"], env),
        f"`a2a-hub tasks list --url URL`{label}": lambda: run_command(tasks, env),
        f"`a2a-hub serve` → first card{label}": lambda: run_server(serve, env),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="counted runs of each command")
    parser.add_argument(
        "--also",
        metavar="DIR",
        help="a source tree of another version of the hub (e.g. `git archive main`), measured "
        "beside this one with the same interpreter and packages",
    )
    args = parser.parse_args(argv)
    exit_on_sigterm()
    # The console script, as users run it; PYTHONPATH names the tree (with `python -m hub`
    # the working directory's tree would come first).
    hub = _hub()
    trees: dict[str, dict[str, str] | None] = {"": None}
    if args.also:
        trees[" (other tree)"] = {**os.environ, "PYTHONPATH": str(Path(args.also).resolve())}
    with _idle_hub() as url:
        commands: dict[str, Callable[[], tuple[float, float]]] = {}
        for label, env in trees.items():
            commands |= _commands_of(hub, url, label, env)
        commands["reference agent → first card"] = lambda: run_server(_reference)
        figures = {name: Figures(name) for name in commands}
        # One warm-up round: the page cache, the bytecode files.
        for _ in range(1):
            for measure in commands.values():
                measure()
        for _ in range(args.runs):
            for name, measure in commands.items():
                wall, cpu = measure()
                figures[name].wall.append(wall)
                figures[name].cpu.append(cpu)
    print(f"{args.runs} interleaved runs each; median (min to max), seconds")
    print("| command | wall | CPU |")
    print("| --- | --: | --: |")
    for measured in figures.values():
        print(measured.row())


if __name__ == "__main__":
    main()
