"""What each command loads before it runs: `--help` and `--version` no HTTP library and no
server, the client commands no server (and no aiohttp), and `from hub import ...` only what
the name needs.

Each check is a fresh interpreter (a child process), so nothing this test session already
imported can hide an import; bench/startup.py measures the time it saves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SERVER = ("litestar", "uvicorn", "hub.server", "hub.runtime")
HTTP = ("httpx", "aiohttp", "httpx_aiohttp")

PROBE = """\
import contextlib, io, json, sys
{setup}
print(json.dumps(sorted(n for n, m in sys.modules.items() if m is not None)), file=sys.__stderr__)
"""


def loaded(setup: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `setup`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(setup=setup)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


def among(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    return {name for name in modules if name.startswith(tuple(f"{p}." for p in packages))} | (
        modules & set(packages)
    )


def run_main(*commands: list[str]) -> str:
    """`hub.cli.main(argv)` for each command line, its output thrown away, its exit caught."""
    return "from hub.cli import main\n" + "".join(
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()),"
        f" contextlib.suppress(SystemExit):\n    main({argv!r})\n"
        for argv in commands
    )


def test_help_version_and_usage_errors_load_no_http_library_and_no_server() -> None:
    modules = loaded(
        run_main(
            ["--help"],
            ["--version"],
            ["send", "--help"],
            ["swarm", "--help"],
            ["tasks", "list", "--page-size", "0"],  # refused by the parser
            ["send", "127.0.0.1:8000", "hi"],  # refused by the parser: no scheme
        )
    )
    assert "hub.cli.parser" in modules
    assert among(modules, SERVER + HTTP + ("hub.cli.direct", "hub.cli.agents")) == set()


def test_a_client_command_loads_httpx_without_its_command_line() -> None:
    # Port 9 (discard) on loopback: refused at once, so the command fails after its imports.
    modules = loaded(
        run_main(
            ["tasks", "list", "--url", "http://127.0.0.1:9"], ["send", "http://127.0.0.1:9", "hi"]
        )
    )
    assert {"httpx", "hub.cli.direct"} <= modules
    # Nor the settings models and YAML: the URL is given, no settings file is read.
    assert (
        among(modules, (*SERVER, "httpx._main", "rich", "pygments", "hub.config", "yaml")) == set()
    )
    # Nor the 0.3 models: they load when a 0.3 agent is met, not with the client.
    assert "hub.protocol.v03.translate" in modules
    assert {"hub.protocol.v03.models", "hub.protocol.v03.card"} & modules == set()


def test_the_client_commands_load_no_server() -> None:
    modules = loaded("import hub.cli.direct, hub.cli.agents")
    assert "httpx" in modules  # what they need, they load
    # aiohttp's transport is loaded by a partner client when it is built, not before: `send`
    # and `tasks` use httpx's own.
    assert among(modules, (*SERVER, "aiohttp", "httpx_aiohttp")) == set()


def test_a_name_of_the_package_loads_only_what_it_needs() -> None:
    modules = loaded("from hub import TaskState, skill, Strategy")
    assert {"hub.protocol", "hub.skills", "hub.swarm.strategy"} <= modules
    assert among(modules, SERVER) == set()


def test_the_served_app_is_built_without_jinja_or_aiohttp() -> None:
    # The console's template engine is built on its first page, and the push notifier's
    # webhook client imports aiohttp in the background once the app starts.
    modules = loaded(
        "from hub.runtime import Hub\n"
        "app = Hub.from_config('bench/hub.yaml').asgi_app()\n"
        "assert any(path.startswith('/ui') for path in app.route_handler_method_map)\n"
    )
    assert "hub.console" in modules
    assert among(modules, ("jinja2", "litestar.plugins.jinja", "aiohttp", "httpx_aiohttp")) == set()
