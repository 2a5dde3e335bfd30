"""Hot reload: real files, real polling, every wait bounded."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from hub.errors import ConfigError
from hub.registry import Registry, RegistryDiff, RegistryWatcher, load_registry

INTERVAL = 0.05
ENV = {"A_TOKEN": "tok-a-5c1d"}
LOGGER = "hub.registry.watch"


def agents(*lines: str) -> str:
    return "version: 1\nagents:\n" + "".join(f"  - {line}\n" for line in lines)


A = "{name: a, url: 'https://a.example.com', auth: {bearer: '${A_TOKEN}'}}"
B = "{name: b, url: 'https://b.example.com'}"
B_HEAVY = "{name: b, url: 'https://b.example.com', weight: 5}"
C = "{name: c, url: 'https://c.example.com'}"


def rewrite(path: Path, text: str) -> None:
    """Replace the file in one step, as editors do, so a poll never reads half of it."""
    scratch = path.with_name(path.name + ".tmp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


class Changes:
    """A listener that records each reload and lets a test wait for the next one."""

    def __init__(self) -> None:
        self.seen: list[tuple[Registry, Registry, RegistryDiff]] = []
        self._event = anyio.Event()

    def __call__(self, old: Registry, new: Registry, diff: RegistryDiff) -> None:
        self.seen.append((old, new, diff))
        self._event.set()

    async def next(self) -> RegistryDiff:
        with anyio.fail_after(5):
            await self._event.wait()
        self._event = anyio.Event()
        return self.seen[-1][2]


class Records(logging.Handler):
    """Lets a test wait for a log record from the watcher."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self._event = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self._event.set()

    async def wait_for(self, caplog: pytest.LogCaptureFixture, level: int, count: int) -> None:
        with anyio.fail_after(5):
            while len([r for r in caplog.records if r.levelno == level]) < count:
                await self._event.wait()
                self._event = anyio.Event()


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Iterator[Records]:
    caplog.set_level(logging.INFO, logger=LOGGER)
    handler = Records()
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def start(
    path: Path, *, interval: float = INTERVAL, initial: Registry | None = None
) -> RegistryWatcher:
    return RegistryWatcher(path, env=ENV, interval=interval, initial=initial)


@pytest.mark.anyio
async def test_an_added_a_changed_and_a_removed_partner_are_picked_up(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A, B))
    changes = Changes()
    async with start(path) as watcher:
        watcher.subscribe(changes)
        assert watcher.registry.names() == ("a", "b")

        rewrite(path, agents(A, B, C))
        assert await changes.next() == RegistryDiff(added=("c",))
        assert watcher.registry.names() == ("a", "b", "c")

        rewrite(path, agents(A, B_HEAVY, C))
        assert await changes.next() == RegistryDiff(changed=("b",))
        assert watcher.registry["b"].weight == 5

        rewrite(path, agents(A, C))
        assert await changes.next() == RegistryDiff(removed=("b",))
        assert watcher.registry.names() == ("a", "c")

    old, new, _ = changes.seen[-1]
    assert old.names() == ("a", "b", "c")
    assert new is watcher.registry


@pytest.mark.anyio
async def test_a_missing_default_file_is_no_warning_and_is_read_once_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, records: Records
) -> None:
    path = tmp_path / "agents.yaml"
    empty = load_registry(path, env=ENV, missing_ok=True)
    changes = Changes()
    async with start(path, initial=empty) as watcher:
        watcher.subscribe(changes)
        # Proving that nothing is logged takes several polls of the missing file.
        with anyio.fail_after(30):
            while watcher.polls < 4:  # noqa: ASYNC110 (the watcher counts its polls, no event)
                await anyio.sleep(INTERVAL)
        rewrite(path, agents(A))
        assert await changes.next() == RegistryDiff(added=("a",))
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.anyio
async def test_a_broken_edit_keeps_the_last_good_registry_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, records: Records
) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    changes = Changes()
    async with start(path) as watcher:
        watcher.subscribe(changes)
        good = watcher.registry

        rewrite(path, agents(A, "{name: b, urll: 'https://b.example.com'}"))
        await records.wait_for(caplog, logging.WARNING, 1)
        assert watcher.registry is good
        # The same broken content written again is not reported again.
        rewrite(path, agents(A, "{name: b, urll: 'https://b.example.com'}"))

        rewrite(path, agents(A, B))
        assert await changes.next() == RegistryDiff(added=("b",))
        assert watcher.registry.names() == ("a", "b")

    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert f"{path}:4: unknown key 'agents.1.urll'; did you mean 'url'?" in message
    assert "last good registry" in message
    assert changes.seen[0][0] is good


@pytest.mark.anyio
async def test_each_distinct_failure_is_logged_without_its_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, records: Records
) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    async with start(path) as watcher:
        good = watcher.registry
        rewrite(path, "version: 1\nagents:\n  - name: a\n   url: x\n")
        await records.wait_for(caplog, logging.WARNING, 1)
        rewrite(path, agents("{name: a, url: 'https://a.example.com', auth: {bearer: sk-9x8y}}"))
        await records.wait_for(caplog, logging.WARNING, 2)
        rewrite(path, agents("{name: a, url: 'https://a.example.com', auth: {bearer: '${NOPE}'}}"))
        await records.wait_for(caplog, logging.WARNING, 3)
        path.unlink()
        await records.wait_for(caplog, logging.WARNING, 4)
        assert watcher.registry is good

    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "not valid YAML" in messages[0]
    assert "environment reference" in messages[1]
    assert "environment variable NOPE is not set" in messages[2]
    assert "cannot read the file" in messages[3]
    assert not any("sk-9x8y" in text or ENV["A_TOKEN"] in text for text in messages)


@pytest.mark.anyio
async def test_a_restored_file_is_reported_valid_again_without_waking_listeners(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, records: Records
) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    changes = Changes()
    async with start(path) as watcher:
        watcher.subscribe(changes)
        path.unlink()
        await records.wait_for(caplog, logging.WARNING, 1)
        rewrite(path, agents(A))
        await records.wait_for(caplog, logging.INFO, 1)
    assert "is valid again" in caplog.records[-1].getMessage()
    assert changes.seen == []


@pytest.mark.anyio
async def test_a_failing_listener_does_not_stop_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    changes = Changes()

    def broken(old: Registry, new: Registry, diff: RegistryDiff) -> None:
        raise RuntimeError("listener bug")

    caplog.set_level(logging.INFO, logger=LOGGER)
    async with start(path) as watcher:
        watcher.subscribe(broken)
        watcher.subscribe(changes)
        rewrite(path, agents(A, B))
        assert await changes.next() == RegistryDiff(added=("b",))
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(failures) == 1
    assert failures[0].exc_info is not None


@pytest.mark.anyio
async def test_reload_raises_on_a_bad_file_and_keeps_the_old_registry(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    watcher = start(path, interval=60.0)
    changes = Changes()
    unsubscribe: Callable[[], None] = watcher.subscribe(changes)
    async with watcher:
        good = watcher.registry
        rewrite(path, "version: 3\n")
        with pytest.raises(ConfigError, match="version 3 is not known"):
            await watcher.reload()
        assert watcher.registry is good

        rewrite(path, agents(A, C))
        reloaded = await watcher.reload()
        assert watcher.registry is reloaded
        assert changes.seen[-1][2] == RegistryDiff(added=("c",))

        unsubscribe()
        unsubscribe()
        rewrite(path, agents(A))
        await watcher.reload()
        assert len(changes.seen) == 1


@pytest.mark.anyio
async def test_a_bad_file_on_entry_raises(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, "version: 1\nagents: {}\n")
    with pytest.raises(ConfigError, match=r"agents\.yaml:2: agents"):
        async with start(path):
            pass


@pytest.mark.anyio
async def test_an_initial_registry_is_used_and_only_real_changes_are_announced(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agents.yaml"
    rewrite(path, agents(A))
    initial = load_registry(path, env=ENV)
    changes = Changes()
    watcher = start(path, initial=initial)
    assert watcher.registry is initial
    watcher.subscribe(changes)
    async with watcher:
        rewrite(path, agents(A) + "# a comment changes the bytes, not the registry\n")
        rewrite(path, agents(A, B))
        assert await changes.next() == RegistryDiff(added=("b",))
    assert len(changes.seen) == 1
    assert changes.seen[0][0] is initial


def test_a_watcher_has_no_registry_before_it_is_entered(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        _ = RegistryWatcher(tmp_path / "agents.yaml").registry
