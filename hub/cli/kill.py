"""`a2a-hub kill --context ID | --caller NAME [URL]`: the kill switch of a running hub, through
its `POST /admin/kill` (an operator's credential with auth on): every task of the context or
the caller that is not terminal is canceled, with the partner tasks they started (and, for a
caller, the partner tasks it started through the gateway)."""

from __future__ import annotations

import argparse
import json

from hub.cli.outcome import Running
from hub.cli.settings import command_settings

__all__ = ["kill"]


async def kill(args: argparse.Namespace, running: Running) -> int:
    """`a2a-hub kill` (the hub at `--url`, default the settings' `server.public_url`)."""
    from hub.cli.direct import cli_http_client, hub_headers
    from hub.client.http_errors import check_status, read_json, translate_http_errors
    from hub.client.rest import status_error

    url = (args.url or command_settings(args).server.base_url()).rstrip("/")
    running.url, running.url_from_settings = url, args.url is None
    body = {"contextId": args.context} if args.context is not None else {"caller": args.caller}
    async with cli_http_client() as http:
        headers = await hub_headers(http, url, args)
        with translate_http_errors(url):
            response = await http.post(f"{url}/admin/kill", json=body, headers=headers)
            if response.status_code >= 400:
                answer = read_json(response, url)
                error = answer.get("error") if isinstance(answer, dict) else None
                if isinstance(error, dict):
                    raise status_error(url, response.status_code, error, response)
            check_status(response, url)
        report = read_json(response, url)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    canceled = report["canceled"]
    said = (
        f"killed {report['target']} at {url}: canceled {_tasks(len(canceled))} and "
        f"{_tasks(report['partnerTasks'], 'partner ')} they started"
    )
    if args.caller is not None and "gatewayTasks" in report:
        said += f", and {_tasks(report['gatewayTasks'], 'partner ')} it started through the gateway"
        if report.get("gatewayFailed"):
            said += f" ({report['gatewayFailed']} could not be canceled)"
    print(said)
    for task_id in canceled:
        print(f"  {task_id}")
    return 0


def _tasks(count: int, kind: str = "") -> str:
    """`count` tasks, in words: "1 task", "2 partner tasks"."""
    return f"{count} {kind}task{'' if count == 1 else 's'}"
