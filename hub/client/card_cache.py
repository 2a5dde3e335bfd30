"""`CardCache`: partners' agent cards by card URL, fetched once and revalidated cheaply.

- Freshness comes from the partner's `Cache-Control: max-age` (or the default TTL); an expired
  card is revalidated with `If-None-Match` / `If-Modified-Since`, so an unchanged card costs
  a 304.
- However many callers ask for a cold or expired card at once, one GET is in flight per URL;
  the others wait for its result.
- When a refresh fails, the last good card is served for a grace window (a warning is
  logged); a card that fails validation is never cached.
- Subscribers hear about a card that changed, so whatever was built from it can be rebuilt.
- Each entry remembers when its card was last fetched (a 304 included) and the card it
  replaced when it last changed (`record`), so an operator can see what changed and when.

0.3 cards are upgraded to 1.0 on read (`hub.protocol.v03.translate.card_to_v1`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import anyio
import httpx
from pydantic import ValidationError

from hub.client.http_client import send_request
from hub.client.http_errors import check_status, fault_of, read_json, translate_http_errors
from hub.client.retry import RetryPolicy
from hub.errors import CardFetchError, ClientError
from hub.protocol import AgentCard
from hub.protocol.urls import CARD_PATH, card_url, shown_url
from hub.protocol.v03.translate import card_to_v1

__all__ = ["CARD_PATH", "CardCache", "CardListener", "CardRecord", "card_url"]

log = logging.getLogger(__name__)

CardListener = Callable[[str, AgentCard], None]
"""Called with (card URL, new card) when a cached card changes."""

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(no-cache|no-store)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class CardRecord:
    """What the cache holds for one card URL.

    Attributes:
        card: the card served now.
        fetched_at: when the partner last answered a fetch of it, a 304 included (Unix
            seconds).
        previous: the card it replaced when it last changed; None if it never changed while
            cached.
        changed_at: when that change was fetched (Unix seconds); None likewise.
    """

    card: AgentCard
    fetched_at: float
    previous: AgentCard | None = None
    changed_at: float | None = None


@dataclass(slots=True)
class _Entry:
    card: AgentCard
    raw: bytes
    etag: str | None
    last_modified: str | None
    expires_at: float
    stale_until: float
    fetched_at: float
    previous: AgentCard | None = None
    changed_at: float | None = None


@dataclass(slots=True)
class _Flight:
    done: anyio.Event
    card: AgentCard | None = None
    error: Exception | None = None


class CardCache:
    """Agent cards by card URL.

    Args:
        http: the client to fetch with (its owner closes it).
        default_ttl: seconds a card stays fresh when the partner sends no `max-age`.
        max_ttl: cap on a partner's `max-age`, so a card cannot pin itself for days.
        grace: seconds past expiry a card may still be served when refreshing it fails.
        retry_stale_after: after a failed refresh, seconds before the next attempt (the stale
            card is served meanwhile, without a request per caller).
        timeout: timeouts of a card GET.
        retry: retry policy of a card GET (a GET is safe to repeat).
        clock: monotonic seconds; injectable for tests.
        wall: wall-clock seconds (when a card was fetched, as `record` tells).
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        default_ttl: float = 300.0,
        max_ttl: float = 86_400.0,
        grace: float = 3_600.0,
        retry_stale_after: float = 5.0,
        timeout: httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._http = http
        self._default_ttl = default_ttl
        self._max_ttl = max_ttl
        self._grace = grace
        self._retry_stale_after = retry_stale_after
        self._timeout = timeout or httpx.Timeout(5.0, read=10.0)
        self._retry = retry or RetryPolicy()
        self._clock = clock
        self._wall = wall
        self._entries: dict[str, _Entry] = {}
        self._flights: dict[str, _Flight] = {}
        self._listeners: list[CardListener] = []

    async def get(self, url: str, *, headers: Mapping[str, str] | None = None) -> AgentCard:
        """The card at `url` (a card URL; see `card_url`), from the cache while it is fresh.

        Args:
            url: the card URL, also the cache key.
            headers: extra headers for a fetch (a partner's authentication).

        Raises:
            CardFetchError: no valid card could be read and no card within its grace window
                is cached.
        """
        entry = self._entries.get(url)
        if entry is not None and self._clock() < entry.expires_at:
            return entry.card
        return await self._fetch(url, force=False, headers=headers)

    async def refresh(self, url: str, *, headers: Mapping[str, str] | None = None) -> AgentCard:
        """Fetch the card now (conditionally when one is cached), whatever its freshness.

        Raises:
            CardFetchError: as for `get`; a failed manual refresh also serves the stale card.
        """
        return await self._fetch(url, force=True, headers=headers)

    def cached(self, url: str) -> AgentCard | None:
        """The cached card for `url`, fresh or not, without any I/O."""
        entry = self._entries.get(url)
        return None if entry is None else entry.card

    def record(self, url: str) -> CardRecord | None:
        """The cached card for `url` with when it was fetched and what it last replaced,
        without any I/O; None when no card is cached."""
        entry = self._entries.get(url)
        if entry is None:
            return None
        return CardRecord(
            card=entry.card,
            fetched_at=entry.fetched_at,
            previous=entry.previous,
            changed_at=entry.changed_at,
        )

    def forget(self, url: str) -> None:
        """Drop the cached card (the next `get` fetches it)."""
        self._entries.pop(url, None)

    def subscribe(self, listener: CardListener) -> Callable[[], None]:
        """Call `listener(url, card)` whenever a cached card changes; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def _fetch(
        self, url: str, *, force: bool, headers: Mapping[str, str] | None
    ) -> AgentCard:
        while True:
            flight = self._flights.get(url)
            if flight is None:
                break
            # Someone is fetching this URL already: share their answer.
            await flight.done.wait()
            if flight.card is not None:
                return flight.card
            if flight.error is not None:
                raise flight.error
            # The fetching caller was canceled before it finished; take over.
        if not force:
            entry = self._entries.get(url)
            if entry is not None and self._clock() < entry.expires_at:
                return entry.card
        flight = _Flight(done=anyio.Event())
        self._flights[url] = flight
        try:
            flight.card = await self._load(url, headers or {})
            return flight.card
        except CardFetchError as exc:
            flight.error = exc
            raise
        finally:
            del self._flights[url]
            flight.done.set()

    async def _load(self, url: str, extra: Mapping[str, str]) -> AgentCard:
        entry = self._entries.get(url)
        try:
            response = await self._retry.call(lambda: self._get(url, entry, extra), idempotent=True)
            if response.status_code == 304 and entry is not None:
                entry.fetched_at = self._wall()
                entry.expires_at = self._expiry(response)
                entry.stale_until = entry.expires_at + self._grace
                return entry.card
            check_status(response, shown_url(url))
            card, raw = self._validate(url, response)
        except ClientError as exc:  # an answer that is not A2A included
            now = self._clock()
            if entry is not None and now < entry.stale_until:
                log.warning(
                    "agent card %s could not be refreshed (%s); serving the cached card",
                    shown_url(url),
                    exc.for_log(),
                )
                entry.expires_at = now + self._retry_stale_after
                return entry.card
            if isinstance(exc, CardFetchError):
                raise
            # The fault in a few words: the wrapped message would name the URL a second time.
            raise CardFetchError(
                f"cannot read the agent card at {shown_url(url)} ({fault_of(exc)})",
                detail=exc.detail,
            ) from exc
        expires_at = self._expiry(response)
        now = self._wall()
        # An unchanged card keeps the change it came with, so the last one stays known.
        previous, changed_at = (None, None) if entry is None else (entry.previous, entry.changed_at)
        changed = entry is not None and entry.raw != raw
        if changed and entry is not None:
            previous, changed_at = entry.card, now
        self._entries[url] = _Entry(
            card=card,
            raw=raw,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
            expires_at=expires_at,
            stale_until=expires_at + self._grace,
            fetched_at=now,
            previous=previous,
            changed_at=changed_at,
        )
        if changed:
            self._notify(url, card)
        return card

    async def _get(
        self, url: str, entry: _Entry | None, extra: Mapping[str, str]
    ) -> httpx.Response:
        headers = {**extra, "Accept": "application/json"}
        if entry is not None:
            if entry.etag:
                headers["If-None-Match"] = entry.etag
            if entry.last_modified:
                headers["If-Modified-Since"] = entry.last_modified
        with translate_http_errors(shown_url(url)):
            # As every partner call is sent: no redirects, cookies or auth flows, and no
            # line from httpx's logger, which would show the URL's query (it may hold a key).
            request = self._http.build_request("GET", url, headers=headers, timeout=self._timeout)
            return await send_request(self._http, request)

    def _validate(self, url: str, response: httpx.Response) -> tuple[AgentCard, bytes]:
        where = shown_url(url)
        document = read_json(response, where)
        if not isinstance(document, dict):
            raise CardFetchError(f"the agent card at {where} is not a JSON object")
        try:
            card = card_to_v1(document)
        except ValidationError as exc:
            raise CardFetchError(
                f"the agent card at {where} is not a valid A2A card ({exc.error_count()} problems: "
                f"{_first_problem(exc)})"
            ) from None
        # Compared canonically, so key order or whitespace changes are not a "new card".
        return card, card.to_json()

    def _expiry(self, response: httpx.Response) -> float:
        cache_control = response.headers.get("cache-control", "")
        ttl = self._default_ttl
        if _NO_CACHE.search(cache_control):
            ttl = 0.0
        elif match := _MAX_AGE.search(cache_control):
            ttl = min(float(match.group(1)), self._max_ttl)
        return self._clock() + ttl

    def _notify(self, url: str, card: AgentCard) -> None:
        for listener in list(self._listeners):
            try:
                listener(url, card)
            except Exception:
                # One broken listener must not keep the others (or the caller) from the card.
                log.exception("agent card listener failed for %s", shown_url(url))


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "card"
    return f"{where}: {error['msg']}"
