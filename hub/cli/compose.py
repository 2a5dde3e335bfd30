"""What `a2a-hub send` sends: the message's parts and metadata, and the extra headers, from
the command's options. A value that cannot be used is a usage error naming the option."""

from __future__ import annotations

import argparse
import base64
import json
import mimetypes
from pathlib import Path
from typing import Any

from hub.cli.outcome import UsageError
from hub.protocol import Message, Part, user_message

__all__ = ["compose_headers", "compose_message", "compose_metadata", "json_option"]


def compose_message(args: argparse.Namespace) -> Message:
    """The user message: the text, then a data part (`--data`), then file parts (`--file`)."""
    parts = [Part(text=args.text)]
    if args.data is not None:
        parts.append(Part(data=json_option("--data", args.data)))
    for path in args.file or []:
        parts.append(_file_part(path))
    return user_message(parts, context_id=args.context_id, task_id=args.task_id)


def compose_metadata(args: argparse.Namespace) -> dict[str, Any] | None:
    """The request's metadata: `--metadata KEY=VALUE` (a VALUE that reads as JSON is sent as
    that value, any other as a string), then `--skill`, `--agent` and `--strategy`."""
    metadata: dict[str, Any] = {}
    for key, value in args.metadata or []:
        try:
            metadata[key] = json.loads(value)
        except json.JSONDecodeError:
            metadata[key] = value
    for key in ("skill", "agent", "strategy"):
        if getattr(args, key, None):
            metadata[key] = getattr(args, key)
    return metadata or None


def compose_headers(args: argparse.Namespace) -> dict[str, str]:
    """The `--header "Name: value"` pairs (`send` has the option; `tasks` has not)."""
    return dict(getattr(args, "header", None) or [])


def json_option(option: str, text: str) -> Any:
    """The JSON value of `option`: given inline, or read from a file named `@path`.

    Raises:
        UsageError: the file cannot be read, or the text is not JSON.
    """
    source = text
    if text.startswith("@"):
        try:
            source = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{option}: cannot read {text[1:]} ({exc.strerror})") from None
    try:
        return json.loads(source)
    except json.JSONDecodeError as exc:
        where = f" in {text[1:]}" if text.startswith("@") else ""
        raise UsageError(
            f"{option} is not valid JSON{where} ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from None


def _file_part(path: str) -> Part:
    try:
        content = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--file: cannot read {path} ({exc.strerror})") from None
    media_type = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return Part(
        raw=base64.b64encode(content).decode("ascii"),
        filename=Path(path).name,
        media_type=media_type,
    )
