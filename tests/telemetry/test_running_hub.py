"""A real `a2a-hub serve` process with JSON logs, auth on, a partner with a secret header and
traces exported by the standard OTEL_* variables: every log line is JSON (uvicorn's too),
the access lines carry the trace, `a2a-hub status` and `agents check --hub` read the running
hub, and no secret of hub.yaml or agents.yaml shows in a log line, a metric or a span."""

from __future__ import annotations

import functools
import json
import secrets
import subprocess
from pathlib import Path

import anyio
import httpx
import pytest

from hub.testing import serve_on_loopback
from tests.client.partners import sdk_jsonrpc
from tests.e2e.hubproc import hub_process
from tests.e2e.test_cli_agents import a2a_hub
from tests.telemetry.hubs import message, rpc
from tests.telemetry.receiver import OtlpReceiver

pytestmark = pytest.mark.anyio


def _config(tmp_path: Path, partner: str) -> Path:
    agents = tmp_path / "agents.yaml"
    agents.write_text(
        "version: 1\nagents:\n"
        f"  - name: helper\n    url: {partner}\n"
        '    auth: {bearer: "${TEST_PARTNER_TOKEN}",\n'
        '           headers: {X-Partner-Key: "${TEST_PARTNER_KEY}"}}\n'
    )
    config = tmp_path / "hub.yaml"
    config.write_text(
        f"server:\n  log_format: json\n  log_level: info\nagents: {agents}\n"
        "store: {kind: memory}\n"
        "skills: [{builtin: echo}, {builtin: delegate}]\ndefault_skill: delegate\n"
        "auth:\n  enabled: true\n  credentials:\n"
        '    - {name: ops, api_key: "${TEST_HUB_KEY}"}\n'
    )
    return config


def _stop(process: subprocess.Popen[bytes]) -> list[str]:
    """Stop the hub as Ctrl-C would, and the lines it wrote after its start-up line."""
    process.terminate()
    process.wait(timeout=60)
    assert process.stderr is not None
    return process.stderr.read().decode().splitlines()


async def test_a_running_hub_logs_json_with_traces_and_no_secret_anywhere(
    tmp_path: Path,
) -> None:
    hub_key = "hk-" + secrets.token_hex(16)
    partner_token = "pt-" + secrets.token_hex(16)
    partner_key = "pk-" + secrets.token_hex(16)
    secret_values = (hub_key, partner_token, partner_key)
    receiver = OtlpReceiver()
    async with serve_on_loopback(receiver) as collector, serve_on_loopback(sdk_jsonrpc) as sdk:
        env = {
            "TEST_HUB_KEY": hub_key,
            "TEST_PARTNER_TOKEN": partner_token,
            "TEST_PARTNER_KEY": partner_key,
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{collector}/v1/traces",
            "OTEL_SERVICE_NAME": "hub-under-test",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        config = _config(tmp_path, sdk)
        with hub_process(config, env=env) as (process, url):
            key = {"X-API-Key": hub_key}
            async with httpx.AsyncClient(timeout=30) as http:
                reply = await rpc(http, url, "SendMessage", {"message": message("hi")}, headers=key)
                assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
                refused = await http.get(f"{url}/status")
                metrics = (await http.get(f"{url}/metrics", headers=key)).text
                ready = await http.get(f"{url}/readyz")
            cli_env = {"A2A_HUB_API_KEY": hub_key}
            runs: dict[str, subprocess.CompletedProcess[str]] = {}

            async def run(name: str, *args: str, env: dict[str, str] | None = cli_env) -> None:
                runs[name] = await a2a_hub(*args, cwd=tmp_path, env=env)

            async with anyio.create_task_group() as group:
                group.start_soon(run, "shown", "status", url)
                group.start_soon(run, "as_json", "status", url, "--json")
                group.start_soon(run, "checked", "agents", "check", "--hub", url)
                group.start_soon(functools.partial(run, "refused", "status", url, env=None))
            lines = await anyio.to_thread.run_sync(_stop, process)
    shown, as_json, checked = runs["shown"], runs["as_json"], runs["checked"]
    unauthenticated = runs["refused"]

    assert refused.status_code == 401
    assert ready.status_code == 200
    assert "a2a_hub_partner_calls_total" in metrics

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1].startswith("ok   helper  breaker closed  latency ")
    status = json.loads(as_json.stdout)
    assert status["liveTasks"] == 0
    assert status["partners"][0]["name"] == "helper"
    assert status["partners"][0]["calls"] == 1
    assert status["partners"][0]["breaker"]["state"] == "closed"
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("ok   helper  breaker closed")
    assert unauthenticated.returncode == 1
    assert "401" in unauthenticated.stderr
    assert "--api-key" in unauthenticated.stderr

    entries = [json.loads(line) for line in lines if line.strip()]
    assert {entry["logger"] for entry in entries} >= {"uvicorn.error", "hub.access"}
    access = [entry for entry in entries if entry["logger"] == "hub.access"]
    (sent,) = [entry for entry in access if entry["a2a_method"] == "SendMessage"]
    assert (sent["status"], sent["caller"], sent["http_method"]) == (200, "ops", "POST")
    assert len(sent["trace_id"]) == 32
    assert len(sent["span_id"]) == 16

    spans = [span for span in receiver.spans if span.service == "hub-under-test"]
    (server,) = [span for span in spans if span.name == "SendMessage" and span.kind == 2]
    assert server.trace_id == sent["trace_id"]
    assert server.span_id == sent["span_id"]

    shown_anywhere = [
        *lines,
        metrics,
        shown.stdout,
        as_json.stdout,
        checked.stdout,
        unauthenticated.stderr,
        *(json.dumps(span.attributes) for span in spans),
        *(span.name for span in spans),
    ]
    for secret in secret_values:
        assert not any(secret in text for text in shown_anywhere), secret
