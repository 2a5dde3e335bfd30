"""Every partner fault, over a real socket, reaches a caller of the partner's tool (Python or
`a2a-hub call`) as one error naming the partner and the kind of fault; the partner's address
and what its answer said are in the error's detail, for the log, and nowhere else."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from hub.cli import main
from hub.errors import ClientError, InvalidAgentResponseError, RemoteRpcError
from hub.partners import Partners
from hub.registry import load_registry
from tests.client.faulty import (
    FAULTS,
    INTERNAL,
    KIND,
    SECRET,
    FaultyPartner,
    assert_nothing_leaks,
    faulty_partner,
)
from tests.client.scripted import respond

pytestmark = pytest.mark.anyio


def agents_yaml(tmp_path: Path, partner: FaultyPartner) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(
        f"version: 1\nagents:\n  - name: faulty\n    url: {partner.url}\n", encoding="utf-8"
    )
    return path


@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
@pytest.mark.parametrize("fault", FAULTS)
async def test_a_tool_call_to_a_faulty_partner_raises_its_kind_and_keeps_the_rest_for_the_log(
    fault: str, streaming: bool, tmp_path: Path
) -> None:
    async with faulty_partner(fault, streaming=streaming) as partner:
        registry = load_registry(agents_yaml(tmp_path, partner))
        async with Partners(registry) as partners:
            with anyio.fail_after(20), pytest.raises(ClientError) as caught:
                await partners["faulty"].call(message="hello")

    error = caught.value
    assert str(error).startswith(f"agent 'faulty' {KIND[fault]}"), str(error)
    assert_nothing_leaks(str(error), partner)
    assert isinstance(error, InvalidAgentResponseError) == KIND[fault].startswith("answered some")
    # The log gets where the partner is and what it said.
    assert error.detail is not None
    assert partner.interface in error.detail
    if fault in ("redirect", "http-500"):
        assert SECRET in error.detail
        assert INTERNAL in error.detail


@pytest.mark.parametrize("fault", ["html", "redirect", "http-500", "refused"])
async def test_a2a_hub_call_prints_the_partner_and_the_kind_only(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with faulty_partner(fault) as partner:
        argv = ["call", "faulty", "hello", "--agents", str(agents_yaml(tmp_path, partner))]
        with anyio.fail_after(30), pytest.raises(SystemExit) as exited:
            # The CLI runs its own event loop: in a thread, while the partner runs in this one.
            await anyio.to_thread.run_sync(main, argv)

    printed = capsys.readouterr()
    assert exited.value.code == 1
    assert printed.err.startswith(f"a2a-hub: agent 'faulty' {KIND[fault]}"), printed.err
    assert_nothing_leaks(printed.out + printed.err, partner)


@pytest.mark.parametrize(
    ("code", "passed_on"),
    [(-32603, False), (-32050, False), (-32001, True), (-32602, True)],
)
async def test_a_partners_own_error_passes_its_message_on_only_when_it_is_about_the_request(
    code: int, passed_on: bool, tmp_path: Path
) -> None:
    async with faulty_partner("html", streaming=False) as partner:
        error = {"code": code, "message": f"failed: password={SECRET} on {INTERNAL}"}
        document = {"jsonrpc": "2.0", "id": 1, "error": error}
        partner.agent.routes["SendMessage"] = respond(200, json.dumps(document).encode())
        registry = load_registry(agents_yaml(tmp_path, partner))
        async with Partners(registry) as partners:
            with anyio.fail_after(20), pytest.raises(RemoteRpcError) as caught:
                await partners["faulty"].call(message="hello")

    assert caught.value.code == code
    text = str(caught.value)
    if passed_on:
        assert text == f"agent 'faulty': SendMessage failed: {error['message']} (code {code})"
    else:
        assert text == f"agent 'faulty': SendMessage failed with an internal error (code {code})"
        assert_nothing_leaks(text, partner)
        assert caught.value.detail is not None
        assert SECRET in caught.value.detail
