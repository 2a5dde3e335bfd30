"""`Load`: echo messages sent to running replicas from a thread while a test breaks them."""

from __future__ import annotations

import itertools
import threading

import httpx

from . import rpc


class Load:
    """Echo messages sent round-robin to the replicas at `urls` from a thread, until the
    block ends.

    `acknowledged` maps the id of each task a replica acknowledged to that replica's URL; a
    stopped replica, or a refusal, acknowledged nothing. `refused` counts the refusals; with
    `refusal`, a refusal must give that reason (the first that does not stops the thread).
    """

    def __init__(self, urls: list[str], *, refusal: str | None = None) -> None:
        self.acknowledged: dict[str, str] = {}
        self.refused = 0
        self._urls = urls
        self._refusal = refusal
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._send, daemon=True)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _send(self) -> None:
        for url in itertools.cycle(self._urls):
            if self._stop.is_set():
                return
            try:
                reply = rpc.post(url, "SendMessage", {"message": rpc.message("load")}).json()
            except httpx.TransportError:
                continue  # a replica stopped: nothing was acknowledged
            if "task" in reply.get("result", {}):
                self.acknowledged[reply["result"]["task"]["id"]] = url
                continue
            if self._refusal is not None:
                assert reply["error"]["data"][0]["reason"] == self._refusal, reply
            self.refused += 1
