"""The examples of README.md and docs/*.md, run so that they stay true.

A fenced block is an example to run as written unless the line before its fence is a comment
`<!-- example: ... (why) -->`: a fragment of a larger program (the body of a skill, a line
inside an `async with` shown above it), or a block run another way (said in the comment).
Every Python example is a whole script (no top-level `await`); the skills the examples
define are served and answer; the README's shell examples run in order in a folder of their
own, each server they start on a free port (its documented address mapped to it); the CLI
tour runs against a real hub process, its placeholders (`TASK_ID`, `NAME`) filled in.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from hub import Hub, Skill
from hub.client import A2AClient, build_http_client, user_message
from hub.config import Settings, StoreSettings
from hub.protocol import Part, Task, TaskState
from hub.testing import serve_on_loopback
from tests.e2e.hubproc import hub_process
from tests.e2e.partnerproc import Child, stop_all

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

MANY_PROCESSES = pytest.mark.timeout(900)
"""The timeout of a test that runs many commands, each a process that loads the hub: it
takes minutes on loaded cores, past the suite's default."""

FRAGMENT = "<!-- example: "


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    text: str
    fragment: bool

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            fence = re.match(r"^```(\w*)$", lines[index])
            if fence is None:
                index += 1
                continue
            end = lines.index("```", index + 1)
            before = lines[index - 1] if index else ""
            found.append(
                Block(
                    path=path,
                    line=index + 1,
                    lang=fence.group(1),
                    text="\n".join(lines[index + 1 : end]) + "\n",
                    fragment=before.startswith(FRAGMENT),
                )
            )
            index = end + 1
    return found


BLOCKS = _blocks()
PYTHON = [block for block in BLOCKS if block.lang == "python" and not block.fragment]


@pytest.mark.parametrize("block", PYTHON, ids=lambda block: block.name)
def test_every_python_example_is_a_whole_script(block: Block) -> None:
    compile(block.text, block.name, "exec")


def _example_skills() -> list[Skill]:
    skills: list[Skill] = []
    for block in PYTHON:
        if "@skill(" not in block.text:
            continue
        module = types.ModuleType(f"example_{block.line}")
        exec(compile(block.text, block.name, "exec"), module.__dict__)  # runs as `import`
        skills.extend(value for value in vars(module).values() if isinstance(value, Skill))
    return skills


@pytest.mark.anyio
async def test_the_skills_the_examples_define_are_served_and_answer() -> None:
    skills = _example_skills()
    assert {"summarize", "count", "interview", "greet"} <= {s.skill_id for s in skills}
    # In memory: the repository's own var/hub.db is the user's `make run` store.
    memory = Settings(store=StoreSettings(kind="memory"))
    hub = Hub(memory, skills=skills, agents=ROOT / "tests" / "docs" / "no-agents.yaml")
    async with (
        serve_on_loopback(lambda url: hub.asgi_app(public_url=url)) as url,
        build_http_client() as http,
    ):
        client = await A2AClient.from_url(url, http=http)
        for local in skills:
            reply = await client.send(
                user_message("three little words"), metadata={"skill": local.skill_id}
            )
            assert isinstance(reply, Task), local.skill_id
            waiting = TaskState.INPUT_REQUIRED if local.skill_id == "interview" else None
            assert reply.status.state is (waiting or TaskState.COMPLETED), local.skill_id
            if local.skill_id == "count":  # skills.md: its chunks are kept as one text part
                assert [a.parts for a in reply.artifacts or []] == [[Part(text="one two three")]]


def _cli_tour() -> list[str]:
    [tour] = [
        block
        for block in BLOCKS
        if block.path.name == "README.md"
        and block.lang == "sh"
        and "a2a-hub tasks get" in block.text
    ]
    return [line.split("#", 1)[0].strip() for line in tour.text.splitlines() if line.strip()]


@MANY_PROCESSES
def test_the_readme_cli_tour_runs_against_a_real_hub(tmp_path: Path) -> None:
    served = tmp_path / "served.yaml"
    served.write_text(
        "server: {log_level: warning}\nstore: {kind: memory}\nskills:\n  - builtin: echo\n"
        "  - module: tests.e2e.crash_skills:interview\n"
    )
    with hub_process(served) as (_, url):
        # The folder the user runs the commands in: its settings point at the running hub.
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "hub.yaml").write_text(
            f"server: {{public_url: '{url}'}}\nskills:\n  - builtin: echo\n"
        )
        (tmp_path / "agents.yaml").write_text(
            f"version: 1\nagents:\n  - name: self\n    url: {url}\n"
        )

        def run(command: str) -> subprocess.CompletedProcess[str]:
            argv = shlex.split(command.replace("http://127.0.0.1:8000", url))
            assert argv[0].endswith("a2a-hub"), command
            return subprocess.run(
                [sys.executable, "-m", "hub", *argv[1:]],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )

        completed = json.loads(run(f'a2a-hub send {url} "done" --json').stdout)["id"]
        parked = [
            json.loads(run(f"a2a-hub send {url} hi --skill interview --json").stdout)["id"]
            for _ in range(2)
        ]
        task_for = {"get": completed, "cancel": parked[0], "subscribe": parked[1]}
        expected = {"subscribe": 3}  # the task it follows waits for input
        for command in _cli_tour():
            action = command.split()[2] if command.split()[1] == "tasks" else ""
            command = command.replace("TASK_ID", task_for.get(action, "")).replace("NAME", "self")
            done = run(command)
            assert "Traceback" not in done.stderr, command
            assert done.returncode == expected.get(action, 0), (command, done.stderr)
            assert done.stdout, command


# --- the README's shell examples, in order, as a new user runs them -----------------------------

_ADDRESS = re.compile(r"http://127\.0\.0\.1:(800\d)")
_HINT = re.compile(r"--task-id (\S+)")
_LISTENING = re.compile(r"a2a-hub listening on (http://[\d.]+:\d+)")


def _complete(command: str) -> bool:
    """False while a quote is still open (a JSON body spread over several lines)."""
    try:
        shlex.split(command.split("<<", 1)[0], comments=True)
    except ValueError:
        return False
    return True


def _commands(text: str) -> list[str]:
    """The block's commands: continuation lines joined, a here-document kept with its line."""
    commands: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        command = lines[index]
        index += 1
        while command.endswith("\\") or not _complete(command):
            command += "\n" + lines[index]
            index += 1
        heredoc = re.search(r"<<'(\w+)'", command)
        if heredoc:
            while lines[index] != heredoc.group(1):
                command += "\n" + lines[index]
                index += 1
            command += "\n" + lines[index]
            index += 1
        if command.strip():
            commands.append(command)
    return commands


class Session:
    """A shell session in a folder of the user's: the environment it exports carries over,
    servers it starts run on free ports (their documented address is mapped to the real
    one), and a task id a command prints to answer is what `TASK_ID` stands for next."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        self.env["PYTHONPATH"] = str(ROOT)
        self.servers: dict[str, Child] = {}
        self.task_id = ""

    def close(self) -> None:
        stop_all(list(self.servers.values()))

    def address(self, port: str) -> str:
        return self.servers[port].url

    def serve(self, port: str, argv: list[str]) -> None:
        if port in self.servers:
            stop_all([self.servers.pop(port)])
        child = Child(
            [sys.executable, "-m", "hub", *argv, "--port", "0"],
            _LISTENING,
            f"the hub of {port}",
            cwd=self.folder,
            env={**self.env, "PYTHONPATH": str(ROOT)},
        )
        self.servers[port] = child
        child.wait_ready()

    def the_hub(self) -> None:
        """The hub `make run` starts, on the registry of var/agents.yaml once there is one
        (as the README says to restart it)."""
        agents = self.folder / "var" / "agents.yaml"
        with_agents = ["--agents", str(agents)] if agents.exists() else []
        running = self.servers.get("8000")
        if running is None or (with_agents and "--agents" not in running.process.args):
            self.serve("8000", ["serve", "--store", "memory", *with_agents])

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        command = command.replace("TASK_ID", self.task_id)
        command = command.replace(".venv/bin/a2a-hub", f"{sys.executable} -m hub")
        command = _ADDRESS.sub(lambda match: self.address(match.group(1)), command)
        env_file = self.folder / ".env-after"
        script = f"{command}\nstatus=$?\nenv -0 > {env_file}\nexit $status\n"
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=self.folder,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        pairs = env_file.read_text().split("\0")
        self.env = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
        hint = _HINT.search(done.stdout)
        if hint:
            self.task_id = hint.group(1)
        return done

    def example(self, command: str) -> str:
        """Run one command of an example; its stdout (empty for a server it starts)."""
        serving = re.search(r"a2a-hub serve(.*?)(&\s*(#.*)?)?$", command)
        if serving:
            argv = shlex.split(serving.group(1).split("#", 1)[0])
            port = argv[argv.index("--port") + 1]
            del argv[argv.index("--port") : argv.index("--port") + 2]
            self.serve(port, ["serve", *argv])
            return ""
        ports = set(_ADDRESS.findall(command))
        if "8000" in ports:
            self.the_hub()
        done = self.run(command)
        assert "Traceback" not in done.stderr, (command, done.stderr)
        waits = done.returncode == 3 and "answer with:" in done.stdout
        assert done.returncode == 0 or waits, (command, done.stdout, done.stderr)
        if command.startswith("curl") and "# 401" not in command:
            # curl exits 0 whatever the HTTP status: the answer itself must be no error.
            assert done.stdout, command
            assert '"error"' not in done.stdout, (command, done.stdout)
            assert '"status":4' not in done.stdout.replace(" ", ""), (command, done.stdout)
        return done.stdout


SHELL = [
    block
    for block in BLOCKS
    if block.path.name == "README.md" and block.lang == "sh" and not block.fragment
]


@MANY_PROCESSES
def test_the_readme_shell_examples_run_in_order(tmp_path: Path) -> None:
    # A fresh clone, as far as the examples read it: the settings and example programs.
    shutil.copytree(ROOT / "config", tmp_path / "config")
    session = Session(tmp_path)
    try:
        for block in SHELL:
            for command in _commands(block.text):
                session.example(command)
    finally:
        session.close()


# --- docs/tools.md and docs/routing.md: the CLI and curl examples, against partners -----------

PARTNER = """\
server: {log_level: warning}
store: {kind: memory}
card: {name: research, description: "Finds a paper and can summarise it (it echoes)."}
skills:
  - builtin: echo
  - module: tests.e2e.crash_skills:interview
"""

# Every partner the examples name, all served by one partner hub: the names and tags are the
# registry's, what answers is the same echo.
PARTNERS = {
    "research": ["research"],
    "other": [],
    "translate": ["translate"],
    "review-a": ["review"],
    "review-b": ["review"],
}


@MANY_PROCESSES
def test_the_partner_examples_of_tools_and_routing_run_against_a_partner_hub(
    tmp_path: Path,
) -> None:
    (tmp_path / "partner.yaml").write_text(PARTNER)
    shutil.copytree(ROOT / "config", tmp_path / "config")
    with hub_process(tmp_path / "partner.yaml") as (_, partner):
        entries = "".join(
            f"  - {{name: {name}, url: '{partner}', tags: {tags}}}\n"
            for name, tags in PARTNERS.items()
        )
        (tmp_path / "agents.yaml").write_text(f"version: 1\nagents:\n{entries}")
        session = Session(tmp_path)
        try:
            # A partner task waiting for an answer: what `--task-id TASK_ID` answers.
            asked = session.run(".venv/bin/a2a-hub call research hi --skill interview")
            assert asked.returncode == 3, asked.stderr
            for doc in ("tools.md", "routing.md"):
                blocks = [block for block in BLOCKS if block.path.name == doc]
                runnable = [block for block in blocks if block.lang == "sh" and not block.fragment]
                assert runnable, doc
                for block in runnable:
                    printed = [session.example(command) for command in _commands(block.text)]
                    after = blocks[blocks.index(block) + 1 :]
                    closing = block.line + len(block.text.splitlines()) + 1
                    if after and after[0].lang == "text" and after[0].line <= closing + 4:
                        # The output the page shows for the block's last command, right after.
                        assert printed[-1] == after[0].text, (block.name, printed[-1])
        finally:
            session.close()


# --- every example: run, or marked with the reason it is not --------------------------------

# Where the shell examples are run (the tests above); anywhere else they must say why not.
SHELL_RUN = {"README.md", "tools.md", "routing.md"}


def test_every_block_has_a_language_and_every_shell_example_is_run_or_says_why_not() -> None:
    for block in BLOCKS:
        # A fence without a language would hide an example from these checks.
        assert block.lang, f"{block.name}: name the block's language (text for output)"
        if block.lang in ("sh", "console") and not block.fragment:
            assert block.path.name in SHELL_RUN, f"{block.name}: run it here, or mark it"


def test_the_security_cli_transcript_is_what_the_cli_prints(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    settings = re.search(r"```yaml\n(auth:.*?)```", text, re.DOTALL)
    assert settings is not None
    [transcript] = [
        block
        for block in BLOCKS
        if block.path.name == "security.md" and "a2a-hub send" in block.text
    ]
    (tmp_path / "hub.yaml").write_text(
        "store: {kind: memory}\nskills:\n  - builtin: echo\n  - builtin: delegate\n"
        + settings.group(1)
    )
    session = Session(tmp_path)
    key = "ops-3f9a2c7e1b5d8a40"
    session.env |= {"HUB_OPS_KEY": key, "HUB_PARTNER_TOKEN": "partner-7d1e5b9c3a2f8064"}
    try:
        session.serve("8123", ["serve", "--config", "hub.yaml"])
        documented = "http://127.0.0.1:8123"
        real = session.address("8123")
        steps = re.split(r"^\$ ", transcript.text, flags=re.MULTILINE)[1:]
        assert len(steps) == 2
        for step in steps:
            command, _, shown = step.partition("\n")
            command = command.replace("A2A_HUB_API_KEY=...", f"A2A_HUB_API_KEY={key}")
            command = command.replace("a2a-hub ", f"{sys.executable} -m hub ", 1)
            done = session.run(command.replace(documented, real))
            printed = (done.stdout + done.stderr).replace(real, documented)
            ids = re.compile(r"\b[0-9a-f]{32}\b")
            assert ids.sub("ID", printed) == ids.sub("ID", shown), command
    finally:
        session.close()
