"""Real processes for the end-to-end swarm and federation tests: a2a-sdk partners
(`tests/e2e/sdk_partner.py`) and hubs, each started with `--port 0`, its URL read from the
line it prints once its socket is bound; and the hub.yaml + agents.yaml that link them.

Each child's stderr is read by a thread for as long as it runs: a long-lived child whose pipe
nobody drains would block once the pipe is full, and what it said is kept for failure reports.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .hubproc import ROOT

START_TIMEOUT = 120.0
_PARTNER_LINE = re.compile(r"sdk partner listening on (http://[\d.]+:\d+)")
_HUB_LINE = re.compile(r"a2a-hub listening on (http://[\d.]+:\d+)")


class Child:
    """One child process whose stderr is read line by line until it exits."""

    def __init__(
        self,
        argv: Sequence[str],
        ready: re.Pattern[str],
        what: str,
        *,
        cwd: Path = ROOT,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.what = what
        self.url = ""
        self.lines: deque[str] = deque(maxlen=400)
        self._ready = ready
        self._started = threading.Event()
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        self.process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**inherited, "PYTHONPATH": str(ROOT), **(env or {}), "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.reader = threading.Thread(target=self._read, name=f"stderr of {what}", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            match = self._ready.search(line)
            if match and not self.url:
                self.url = match.group(1)
                self._started.set()
        self._started.set()  # it exited: stop waiting

    def wait_ready(self, timeout: float = START_TIMEOUT) -> str:
        """The URL the child printed; raises with what it said if it did not start."""
        self._started.wait(timeout)
        if not self.url:
            raise RuntimeError(f"{self.what} did not start within {timeout}s:\n{self.output()}")
        return self.url

    def output(self) -> str:
        return "\n".join(self.lines)


def stop_all(children: Sequence[Child]) -> None:
    """Stop the children: all are asked to end at once, then each is waited for (at most
    10 s, then killed)."""
    for child in children:
        if child.process.poll() is None:
            child.process.terminate()
    for child in children:
        try:
            child.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()
        child.reader.join(timeout=5)
        if child.process.stderr is not None:
            child.process.stderr.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class PartnerSpec:
    """One sdk_partner process: its agents.yaml name and tags, and how it behaves."""

    name: str
    behaviour: str
    tags: tuple[str, ...] = ()
    protocol: str = "1.0"
    answer: str | None = None
    suffix: str = ""
    delay: float | None = None

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "tests.e2e.sdk_partner", "--port", "0"]
        argv += ["--behaviour", self.behaviour, "--name", self.name, "--protocol", self.protocol]
        if self.answer is not None:
            argv.append(f"--answer={self.answer}")  # "=": a value may start with "-"
        if self.suffix:
            argv.append(f"--suffix={self.suffix}")
        if self.delay is not None:
            argv += ["--delay", str(self.delay)]
        return argv


@contextmanager
def partner_process(spec: PartnerSpec) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Start one sdk_partner; yields the process and its URL, stops it on exit."""
    with partner_processes([spec]) as started:
        child = started[spec.name]
        yield child.process, child.url


@contextmanager
def partner_processes(specs: Sequence[PartnerSpec]) -> Iterator[dict[str, Child]]:
    """Start several sdk_partners at once (they start in parallel); yields them by name."""
    children: dict[str, Child] = {}
    try:
        for spec in specs:
            children[spec.name] = Child(spec.argv(), _PARTNER_LINE, f"sdk partner '{spec.name}'")
        for child in children.values():
            child.wait_ready()
        yield children
    finally:
        stop_all(list(children.values()))


def hub_child(config: Path) -> Child:
    """Start `a2a-hub serve --config CONFIG --port 0`; call `wait_ready()` for its URL and
    stop it with `stop_all` (or kill it, to test a crash)."""
    argv = [sys.executable, "-m", "hub", "serve", "--config", str(config), "--port", "0"]
    return Child(argv, _HUB_LINE, f"hub {config}")


@contextmanager
def hub_processes(configs: Sequence[Path]) -> Iterator[list[Child]]:
    """Start `a2a-hub serve --config CONFIG --port 0` for each config, in parallel."""
    children: list[Child] = []
    try:
        for config in configs:
            children.append(hub_child(config))
        for child in children:
            child.wait_ready()
        yield children
    finally:
        stop_all(children)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentEntry:
    """One entry of an agents.yaml."""

    name: str
    url: str
    tags: tuple[str, ...] = ()


def write_agents(path: Path, entries: Sequence[AgentEntry]) -> Path:
    """Write an agents.yaml listing `entries`, in one step (the hub follows the file)."""
    lines = ["version: 1", "agents:" if entries else "agents: []"]
    for entry in entries:
        lines += [f"  - name: {entry.name}", f"    url: {entry.url}"]
        if entry.tags:
            lines.append(f"    tags: [{', '.join(entry.tags)}]")
    scratch = path.with_suffix(".tmp")
    scratch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scratch.replace(path)
    return path


def agents_for(children: dict[str, Child], specs: Sequence[PartnerSpec]) -> list[AgentEntry]:
    """The agents.yaml entries of started partners, with their specs' tags."""
    return [AgentEntry(name=s.name, url=children[s.name].url, tags=s.tags) for s in specs]


SKILLS = ("echo", "delegate", "swarm", "federation")


def write_hub_config(
    folder: Path,
    *,
    entries: Sequence[AgentEntry] = (),
    card_name: str = "a2a-hub",
    max_hops: int | None = None,
    default_skill: str = "echo",
) -> Path:
    """A hub config folder: hub.yaml (built-in skills, SQLite store in `folder`) and an
    agents.yaml listing `entries`; returns hub.yaml's path."""
    folder.mkdir(parents=True, exist_ok=True)
    agents = write_agents(folder / "agents.yaml", entries)
    server = "{log_level: warning" + (f", max_hops: {max_hops}" if max_hops else "") + "}"
    skills = "".join(f"  - builtin: {skill}\n" for skill in SKILLS)
    config = folder / "hub.yaml"
    config.write_text(
        f"server: {server}\n"
        f"store: {{kind: sqlite, path: {folder / 'hub.db'}}}\n"
        f"agents: {agents}\n"
        f"skills:\n{skills}"
        f"default_skill: {default_skill}\n"
        f"card: {{name: {card_name}}}\n",
        encoding="utf-8",
    )
    return config
