"""The README's embedding example under plain `uvicorn my_app:app`, a real process: uvicorn
sets up only its own loggers, and the hub's own lines (where it keeps its tasks, its
warnings) still show, in the hub's format."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import rpc
from .partnerproc import Child, stop_all

APP = """\
from hub import Hub, SkillContext, skill


@skill(id="greet", description="Greets whoever writes.")
async def greet(ctx: SkillContext) -> str:
    return f"Hello, {ctx.text}!"


app = Hub(skills=[greet]).asgi_app()
"""

_RUNNING = re.compile(r"Uvicorn running on (http://[\d.]+:\d+)")


def test_the_hubs_own_log_lines_show_under_plain_uvicorn(tmp_path: Path) -> None:
    (tmp_path / "my_app.py").write_text(APP, encoding="utf-8")
    argv = [sys.executable, "-m", "uvicorn", "my_app:app", "--port", "0"]
    server = Child(argv, _RUNNING, "uvicorn", cwd=tmp_path)
    try:
        url = server.wait_ready(60)
        task = rpc.send(url, "Ada")
    finally:
        stop_all([server])
    assert rpc.state(task) == "TASK_STATE_COMPLETED"
    started = [line for line in server.lines if " INFO hub.server: " in line]
    assert [line.split(" INFO ", 1)[1] for line in started] == [
        f"hub.server: a2a-hub serves greet; tasks are kept in {tmp_path / 'var' / 'hub.db'}"
    ]
