"""Reading a request body: a JSON content type and a size limit, checked before parsing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from litestar import Request
from litestar.types import Receive

from hub.errors import ContentTypeError, InvalidRequestError, PayloadTooLargeError

__all__ = ["read_asgi_json_body", "read_json_body"]

_JSON_TYPES = ("application/json", "application/a2a+json")


def _check(content_type: str, declared_length: str | None, limit: int) -> None:
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type not in _JSON_TYPES and not media_type.endswith("+json"):
        shown = media_type or "none"
        raise ContentTypeError(
            f"Content-Type {shown} is not accepted; send the body as JSON with "
            "'Content-Type: application/json'"
        )
    if declared_length is None:
        return
    # isdigit() alone admits "²", which int() refuses: only ASCII digits make a length.
    if not (declared_length.isascii() and declared_length.isdigit()):
        raise InvalidRequestError(
            f"Content-Length {declared_length[:20]!r} is not a number of bytes"
        )
    declared = int(declared_length)
    if declared > limit:
        raise _too_large(declared, limit)


def _too_large(size: int, limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(
        f"request body is {size} bytes or more; the limit is {limit} bytes (limits.max_body)"
    )


async def read_json_body(request: Request[Any, Any, Any], limit: int) -> bytes:
    """The raw body of a JSON request, read from the ASGI messages rather than through
    Litestar's stream, whose own limit would answer first in its own terms.

    Raises:
        ContentTypeError: the Content-Type is not JSON.
        PayloadTooLargeError: the body is larger than `limit` bytes.
    """
    return await read_asgi_json_body(request.headers, request.receive, limit)


async def read_asgi_json_body(headers: Mapping[str, str], receive: Receive, limit: int) -> bytes:
    """The same as `read_json_body`, straight from ASGI messages (the JSON-RPC hot path)."""
    _check(headers.get("content-type", ""), headers.get("content-length"), limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away mid-body
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)
