"""The real small model of `hub.testing.local_model` for the tests of this directory.

One model per test session: under xdist, one per worker that runs a test here (each a child
process of about 270 MB, ready in 1 to 2 s). It is served from its own event loop, in a
thread (an anyio blocking portal), so every test reaches it by URL whatever its own loop, and
the tests keep their one loop each.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from anyio.from_thread import start_blocking_portal

from hub.testing.local_model import serve_local_model


@pytest.fixture(scope="session")
def local_model() -> Iterator[str]:
    """The base URL of SmolLM2-135M-Instruct on loopback, `http://127.0.0.1:PORT/v1`, started
    on first use and stopped (SIGTERM) when the session ends."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(serve_local_model()) as url,
    ):
        yield url
