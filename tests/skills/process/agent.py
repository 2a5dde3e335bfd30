"""A stand-in command-line agent for the process-skill tests: `agent.py SCENARIO [ARG...]`.

Run with `sys.executable`. It never sleeps to pass time: a scenario that must stay alive
blocks on stdin, which the hub keeps open and never writes unless it answers an approval.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def started(**details: object) -> None:
    """The `init` event, with what the tests need to find the task and the processes."""
    emit(type="init", task=os.environ["A2A_TASK_ID"], pid=os.getpid(), **details)


def block() -> None:
    """Wait on stdin until the hub closes it (or kills us)."""
    sys.stdin.readline()


def grandchild() -> int:
    """A `sleep` in our process group that outlives us unless the group is killed."""
    return subprocess.Popen(["sleep", "300"]).pid


def main(scenario: str, args: list[str]) -> int:
    if scenario == "events":
        emit(type="init", session="s-1", model="stand-in")
        emit(type="thinking", text="Let me look. ")
        emit(type="text", text="Hello")
        emit(type="text", text=", world")
        emit(type="tool_use", name="Bash", input={"command": "ls"})
        emit(type="tool_result", name="Bash", output="x" * 500, is_error=False)
        print("this line is not JSON {", flush=True)
        emit(type="mystery", text="unknown type")
        emit(type="done", summary="said hello", stats={"turns": 1})
        return 0
    if scenario == "argv":
        emit(type="text", text=json.dumps(args))
        emit(type="done")
        return 0
    if scenario == "mark":
        with open(args[0], "w") as marker:
            marker.write("ran")
        emit(type="done")
        return 0
    if scenario == "env":
        seen = [os.getcwd(), os.environ.get("STAND_IN_TOKEN"), os.environ["A2A_TASK_ID"], args]
        emit(type="text", text=json.dumps(seen))
        emit(type="done")
        return 0
    if scenario == "plain":
        print("first line", flush=True)
        print("second line", flush=True)
        return 0
    if scenario == "no-done":
        emit(type="text", text="forgot to say done")
        return 0
    if scenario == "fail":
        emit(type="text", text="trying")
        for n in range(30):
            print(f"stderr line {n}", file=sys.stderr)
        print("the real reason: disk full", file=sys.stderr, flush=True)
        return 1
    if scenario == "done-then-fail":
        emit(type="done", summary="claims success")
        print("crashed on the way out", file=sys.stderr, flush=True)
        return 3
    if scenario == "error":
        emit(type="error", message="the model refused")
        block()
        return 0
    if scenario == "hang":
        started()
        block()
        return 0
    if scenario == "idle":
        started()
        emit(type="text", text="working...")
        block()
        return 0
    if scenario == "grandchild":
        started(child=grandchild())
        block()
        return 0
    if scenario == "stubborn":
        # SIG_IGN survives exec, so the grandchild ignores SIGTERM too: only SIGKILL works.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        started(child=grandchild())
        block()
        return 0
    if scenario == "leaves-child":
        # The grandchild inherits stdout, so stdout stays open after we exit.
        started(child=grandchild())
        emit(type="done", summary="left a child behind")
        return 0
    if scenario == "flood":
        lines = int(args[0])
        for n in range(lines):
            print(f"err {n}", file=sys.stderr)
            emit(type="text", text=f"line {n}\n")
        print("x" * 3_000_000, flush=True)  # one line longer than the hub keeps whole
        emit(type="done", stats={"lines": lines})
        return 0
    if scenario == "approval":
        started()
        emit(type="approval_required", prompt="Delete build/?")
        answer = sys.stdin.readline()
        emit(type="text", text=f"answer={answer!r}")
        if answer.strip() != "yes":
            emit(type="error", message=f"not approved: {answer.strip()}")
            return 1
        emit(type="done", summary="deleted")
        return 0
    if scenario == "ask-and-quit":
        emit(type="approval_required", prompt="Go on?")
        return 0
    raise SystemExit(f"unknown scenario {scenario!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
