"""Reading a request body: a JSON content type and a size limit, checked before parsing."""

from __future__ import annotations

from typing import Any

from litestar import Request

from hub.errors import ContentTypeError, PayloadTooLargeError

__all__ = ["read_json_body"]

_JSON_TYPES = ("application/json", "application/a2a+json")


async def read_json_body(request: Request[Any, Any, Any], limit: int) -> bytes:
    """The raw body of a JSON request.

    Raises:
        ContentTypeError: the Content-Type is not JSON.
        PayloadTooLargeError: the body is larger than `limit` bytes.
    """
    content_type = request.headers.get("content-type", "")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type not in _JSON_TYPES and not media_type.endswith("+json"):
        shown = media_type or "none"
        raise ContentTypeError(
            f"Content-Type {shown} is not accepted; send the body as JSON with "
            "'Content-Type: application/json'"
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> PayloadTooLargeError:
    return PayloadTooLargeError(
        f"request body is {size} bytes or more; the limit is {limit} bytes (limits.max_body)"
    )
