"""One notification to one webhook: the address checked again, the POST, and the retries.

Each attempt resolves the webhook's host anew and checks every address (`UrlGuard`), then
posts to a checked address with the original `Host` header and TLS server name. A 2xx answer
is success. A 3xx (redirects are not followed) or 4xx answer, or an address the guard now
refuses, ends the delivery at once. A 5xx answer, a timeout, a failed connection or a host
that does not resolve is retried after each of `retry_delays` in turn. A delivery that gives
up logs one warning naming the task, the config and the webhook's origin, never its path,
query, token or credentials.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import httpx

from hub.client.guard import CheckedUrl, UrlGuard
from hub.errors import UnsafeUrlError
from hub.push.config import PushTarget

__all__ = ["WebhookDelivery"]

log = logging.getLogger("hub.push")


class _Retry(Exception):
    """An attempt failed in a way worth repeating."""


class _GiveUp(Exception):
    """An attempt failed in a way that repeating cannot fix."""


class WebhookDelivery:
    """Posts notification bodies to webhooks, retrying what is worth retrying.

    Args:
        http: the client to post with (it must not follow redirects).
        guard: checks each webhook's addresses before every attempt.
        timeout: seconds one attempt may take, connection included.
        retry_delays: the waits before each retry.
    """

    def __init__(
        self,
        *,
        http: httpx.AsyncClient,
        guard: UrlGuard,
        timeout: float,
        retry_delays: Sequence[float],
    ) -> None:
        self._http = http
        self._guard = guard
        self._timeout = timeout
        self._delays = tuple(retry_delays)

    async def deliver(
        self, target: PushTarget, body: bytes, *, superseded: anyio.Event | None = None
    ) -> bool:
        """Deliver `body` to `target`; True once a webhook accepted it.

        Never raises for a failed delivery. Stops early, without a warning, when the target
        is deleted or when `superseded` is set during a wait between attempts (a newer state
        of the task is on its way, so repeating this one is pointless, or the hub stops).
        """
        attempts = len(self._delays) + 1
        for attempt in range(attempts):
            if not target.active:
                return False
            try:
                await self._attempt(target, body)
            except _GiveUp as exc:
                self._warn(target, attempt + 1, str(exc))
                return False
            except _Retry as exc:
                if attempt + 1 == attempts:
                    self._warn(target, attempts, str(exc))
                    return False
                if await self._wait(self._delays[attempt], superseded):
                    return False
            else:
                return True
        return False  # pragma: no cover - the loop always returns

    async def _attempt(self, target: PushTarget, body: bytes) -> None:
        try:
            checked = await self._guard.resolve(target.url)
        except UnsafeUrlError as exc:
            raise _GiveUp(f"refused by the address check ({exc.violations[0][1]})") from None
        except OSError:
            raise _Retry(f"the host {target.url.host!r} does not resolve") from None
        failure = "no address to connect to"
        with anyio.move_on_after(self._timeout):
            for address in checked.addresses:
                try:
                    status = await self._post(checked, address, target, body)
                except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                    failure = f"cannot connect ({type(exc).__name__})"
                    continue  # the host's next address, if it has one
                except httpx.TimeoutException:
                    raise _Retry(f"no answer within {self._timeout:g}s") from None
                except httpx.HTTPError as exc:
                    raise _Retry(f"the connection failed ({type(exc).__name__})") from None
                if 200 <= status < 300:
                    return
                if 300 <= status < 400:
                    raise _GiveUp(f"HTTP {status}; redirects are not followed")
                if 400 <= status < 500:
                    raise _GiveUp(f"HTTP {status}; a 4xx answer is not retried")
                raise _Retry(f"HTTP {status}")
            raise _Retry(failure)
        raise _Retry(f"no answer within {self._timeout:g}s")

    async def _post(
        self, checked: CheckedUrl, address: str, target: PushTarget, body: bytes
    ) -> int:
        headers = target.headers()
        headers["Host"] = checked.host_header
        server_name = checked.tls_server_name
        extensions = {"sni_hostname": server_name} if server_name else None
        request = self._http.build_request(
            "POST",
            checked.request_url(address),
            content=body,
            headers=headers,
            timeout=httpx.Timeout(self._timeout),
            extensions=extensions,
        )
        # The answer's body is never read: only its status matters.
        response = await self._http.send(request, stream=True, follow_redirects=False)
        await response.aclose()
        return response.status_code

    @staticmethod
    async def _wait(delay: float, superseded: anyio.Event | None) -> bool:
        """Sleep `delay` seconds; True if `superseded` was set meanwhile."""
        if superseded is None:
            await anyio.sleep(delay)
            return False
        with anyio.move_on_after(delay):
            await superseded.wait()
        return superseded.is_set()

    @staticmethod
    def _warn(target: PushTarget, attempts: int, reason: str) -> None:
        log.warning(
            "push notification for task %s (config %s) to %s not delivered after %d attempt(s): %s",
            target.task_id,
            target.config_id,
            target.url.origin,
            attempts,
            reason,
        )
