"""`a2a-hub send URL` and `a2a-hub call NAME` to an agent whose card offers only gRPC (the
official a2a-sdk's gRPC server), as real CLI processes: the answer, a stream's chunks, and
a task the agent does not know."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.certificates import self_signed
from tests.client.partners import ECHO, EchoOrWaitExecutor
from tests.sdk_agents import GrpcAgent, sdk_grpc_agent

from .hubproc import ROOT
from .test_cli_agents import a2a_hub, agents_at, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
async def agent() -> AsyncIterator[GrpcAgent]:
    async with sdk_grpc_agent(
        EchoOrWaitExecutor(), name="grpc-only", description="speaks gRPC only", skill=ECHO
    ) as served:
        yield served


async def test_send_to_a_grpc_only_agent_prints_its_answer(
    tmp_path: Path, agent: GrpcAgent
) -> None:
    out = (await ok("send", agent.url, "hello over grpc", cwd=tmp_path)).splitlines()

    assert out[0].startswith("task ")
    assert out[0].endswith(": completed")
    assert out[1:] == ["  artifact echo: hello over grpc"]


async def test_send_stream_to_a_grpc_only_agent_prints_each_event(
    tmp_path: Path, agent: GrpcAgent
) -> None:
    out = (await ok("send", "--stream", agent.url, "streamed", cwd=tmp_path)).splitlines()
    raw = await ok("send", "--stream", "--raw", agent.url, "streamed", cwd=tmp_path)

    assert out[0].startswith("[task] ")
    assert out[1:] == ["streamed", "[status] completed"]
    assert "[artifact] echo: streamed" in raw.splitlines()


async def test_call_names_a_grpc_partner_of_agents_yaml(tmp_path: Path, agent: GrpcAgent) -> None:
    agents_at(tmp_path, {"rpc": agent.url})

    out = await ok("call", "rpc", "hi there", cwd=tmp_path)
    missing = await a2a_hub("tasks", "get", "no-such-task", "--url", agent.url, cwd=tmp_path)

    assert out.splitlines()[1:] == ["  echo: hi there"]
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "Traceback" not in missing.stderr
    assert "TASK_NOT_FOUND" in missing.stderr


async def test_without_the_grpc_extra_send_names_the_pip_command(
    tmp_path: Path, agent: GrpcAgent
) -> None:
    hidden = tmp_path / "no_grpc"
    hidden.mkdir()
    # Run before anything else in the process: grpc as if it were not installed.
    (hidden / "sitecustomize.py").write_text("import sys\nsys.modules['grpc'] = None\n")
    env = {"PYTHONPATH": os.pathsep.join([str(hidden), str(ROOT)])}

    done = await a2a_hub("send", agent.url, "hello", cwd=tmp_path, env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "offered: GRPC 1.0" in done.stderr
    assert done.stderr.rstrip().endswith("gRPC needs the grpc extra: pip install 'a2a-hub[grpc]'")


async def test_a_grpcs_interface_is_called_over_verified_tls(tmp_path: Path) -> None:
    cert_file, key_file = self_signed(tmp_path)
    async with sdk_grpc_agent(
        EchoOrWaitExecutor(),
        name="grpc-tls",
        description="speaks gRPC over TLS only",
        skill=ECHO,
        tls=(cert_file, key_file),
    ) as served:
        # grpc's own variable: the authorities it trusts instead of the system's.
        trusting = {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(cert_file)}
        out = await ok("send", served.url, "over tls", cwd=tmp_path, env=trusting)
        refused = await a2a_hub("send", served.url, "over tls", cwd=tmp_path)

    assert out.splitlines()[1:] == ["  artifact echo: over tls"]
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.startswith(f"a2a-hub: cannot reach {served.url}")  # no grpc noise
    assert "Traceback" not in refused.stderr
