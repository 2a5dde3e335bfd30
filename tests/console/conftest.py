"""One headless Chromium (Debian's package, driven by Playwright) for the whole session."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("CONSOLE_SCREENSHOTS", ROOT / "var" / "screenshots"))
"""Where the tests save screenshots of the main pages (a test artifact)."""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    # Session-wide, so the browser below is launched once on the loop every test runs on.
    return "asyncio"


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    executable = chromium_path()
    if executable is None:
        pytest.fail("the console tests need Debian's chromium package: run `make chromium`")
    async with async_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        launched = await playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
