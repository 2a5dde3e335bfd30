"""Readiness: the hub can serve (it has started, its store answers, its registry is loaded).
Liveness is only that the process answers, so it needs no check of its own."""

from __future__ import annotations

import anyio

from hub.errors import StoreError
from hub.store import Storage
from hub.telemetry.status import ReadyStatus

__all__ = ["check_readiness"]

_STORE_TIMEOUT = 2.0


async def check_readiness(store: Storage, *, started: bool, partners: int) -> ReadyStatus:
    """Ping the store (within two seconds) and report each part.

    Args:
        store: the task store.
        started: the app's start-up finished (store opened, registry loaded, task manager
            running).
        partners: the partners the loaded registry names.
    """
    checks: dict[str, str] = {}
    if not started:
        checks["store"] = "the hub is starting"
        checks["registry"] = "the hub is starting"
        return ReadyStatus(ready=False, checks=checks)
    try:
        with anyio.fail_after(_STORE_TIMEOUT):
            await store.ping()
        checks["store"] = "ok"
    except TimeoutError:
        checks["store"] = f"no answer within {_STORE_TIMEOUT:g} s"
    except StoreError as exc:
        checks["store"] = str(exc)
    checks["registry"] = f"ok ({partners} partners)"
    return ReadyStatus(
        ready=all(value.startswith("ok") for value in checks.values()), checks=checks
    )
