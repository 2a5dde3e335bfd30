"""How a card document is answered over HTTP: which rendering a request gets, and the
caching headers (`ETag`, `Last-Modified`, `Cache-Control`, `Vary`) with their 304s.

A request that asks for A2A 1.x (`A2A-Version: 1.0`, header or query parameter) gets the
pure 1.0 card. Any other request, with no version (which the spec reads as 0.3), with 0.3,
or with a version this hub cannot read, gets the hybrid card, which clients of both versions
read; with `card.hybrid: false` every request gets the pure 1.0 card. The answer varies
with the header, so it says `Vary: A2A-Version`, and each rendering has its own ETag.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

from litestar import Request
from litestar.response import Response

from hub.server.card import CardBody, CardDocument
from hub.server.version import major_of, requested_version

__all__ = ["card_response", "choose_rendering"]

AnyRequest = Request[Any, Any, Any]


def choose_rendering(
    document: CardDocument, version: str | None, *, hybrid: bool = True
) -> CardBody:
    """The rendering of `document` for a card request that named `version` (None: none)."""
    if not hybrid or (version is not None and major_of(version) == 1):
        return document.v1
    return document.hybrid


def _not_modified_since(last_modified: datetime, if_modified_since: str | None) -> bool:
    if not if_modified_since:
        return False
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError):
        return False  # an unreadable date is ignored, as RFC 9110 asks
    if since.tzinfo is None:
        return False
    return last_modified <= since


def card_response(
    request: AnyRequest,
    document: CardDocument,
    *,
    cache_control: str,
    hybrid: bool = True,
    headers: Mapping[str, str] | None = None,
) -> Response[bytes]:
    """The card for `request`: 200 with the rendering it asks for, or 304 when its
    `If-None-Match` names that rendering's ETag or, without `If-None-Match`, its
    `If-Modified-Since` is not older than the card (RFC 9110 §13.2.2).

    Args:
        request: the card request.
        document: the card to answer with.
        cache_control: the `Cache-Control` value.
        hybrid: serve the hybrid rendering to requests that do not ask for 1.0
            (`card.hybrid`).
        headers: more headers for both answers.
    """
    rendering = choose_rendering(
        document, requested_version(request.headers, request.query_params), hybrid=hybrid
    )
    sent = {
        **(headers or {}),
        "ETag": rendering.etag,
        "Last-Modified": format_datetime(document.last_modified, usegmt=True),
        "Cache-Control": cache_control,
    }
    if hybrid:
        sent["Vary"] = "A2A-Version"
    if_none_match = request.headers.get("if-none-match")
    if rendering.matches(if_none_match) or (
        if_none_match is None
        and _not_modified_since(document.last_modified, request.headers.get("if-modified-since"))
    ):
        return Response(content=b"", status_code=304, headers=sent)
    return Response(content=rendering.body, media_type="application/json", headers=sent)
