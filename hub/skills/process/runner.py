"""One run of a program in its own process group: its output as it comes, and a stop that
leaves no process behind.

The program is started in a new session, so it and everything it spawns share one process
group that no terminal signal reaches. Stopping the run signals that whole group: SIGTERM, a
grace period for the program to exit, then SIGKILL for whatever is left, grandchildren
included.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hub.errors import SkillError

__all__ = ["MAX_LINE", "RunningProcess", "run_process"]

log = logging.getLogger("hub.skills.process")

MAX_LINE = 1024 * 1024
"""Longest stdout line kept whole; a longer one is cut into lines of this size."""
_LINE_BUFFER = 256
"""stdout lines read ahead of the skill; when it is full the program blocks on its writes."""
_STDERR_LINES = 20
_STDERR_CHARS = 2000


class RunningProcess:
    """A started program: its stdout lines, the tail of its stderr, its stdin and its exit.

    Attributes:
        lines: stdout, one line at a time (without the line break); ends when stdout closes.
    """

    def __init__(self, process: Process, lines: MemoryObjectReceiveStream[str]) -> None:
        self._process = process
        self.lines = lines
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self.exited = anyio.Event()
        """Set when the program itself (the group leader) has exited."""
        self._exit_scopes: set[anyio.CancelScope] = set()
        self.stderr_closed = anyio.Event()
        """Set when stderr has been read to its end (the tail is complete)."""

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code, or minus the signal number that ended the program."""
        return self._process.returncode

    def stderr_tail(self) -> str:
        """The last lines the program wrote to stderr (at most 2000 characters)."""
        return "\n".join(self._stderr)[-_STDERR_CHARS:]

    async def wait(self) -> int:
        """Wait for the program to exit; returns its exit code."""
        return await self._process.wait()

    @contextmanager
    def until_exit(self) -> Iterator[anyio.CancelScope]:
        """A cancel scope that is canceled when the program exits (`cancelled_caught` tells)."""
        with anyio.CancelScope() as scope:
            if self.exited.is_set():
                scope.cancel()
            self._exit_scopes.add(scope)
            try:
                yield scope
            finally:
                self._exit_scopes.discard(scope)

    async def write_line(self, text: str) -> bool:
        """Write `text` and a line break to stdin; False if the program no longer reads it."""
        stdin = self._process.stdin
        if stdin is None:
            return False
        try:
            await stdin.send(text.encode() + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return False
        return True

    def signal_group(self, signum: signal.Signals) -> None:
        """Send `signum` to every process of the run's group (nothing if none is left)."""
        # An empty group is gone; its id cannot have been reused while a member lived.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signum)

    async def stop(self, grace: float) -> None:
        """SIGTERM to the group, up to `grace` seconds for the program to exit, then SIGKILL
        to whatever is left of the group."""
        if self._process.returncode is None:
            self.signal_group(signal.SIGTERM)
            with anyio.move_on_after(grace):
                await self._process.wait()
        self.signal_group(signal.SIGKILL)
        if self._process.returncode is None:
            await self._process.wait()

    async def _watch_exit(self, grace: float) -> None:
        await self._process.wait()
        self.exited.set()
        for scope in self._exit_scopes:
            scope.cancel()
        # Processes the program left behind would keep stdout open and the run alive: they
        # get the same SIGTERM, grace period and SIGKILL as a stopped run.
        self.signal_group(signal.SIGTERM)
        await anyio.sleep(grace)
        self.signal_group(signal.SIGKILL)

    async def _read_stderr(self, stream: ByteReceiveStream) -> None:
        async for line in _split_lines(stream):
            log.debug("pid %d stderr: %s", self._process.pid, line)
            self._stderr.append(line)
        self.stderr_closed.set()


async def _split_lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    """Lines of `stream` as text (invalid UTF-8 replaced), the last one even without a break."""
    buffer = bytearray()
    try:
        async for chunk in stream:
            buffer += chunk
            start = 0
            while True:
                end = buffer.find(b"\n", start)
                if end < 0:
                    if len(buffer) - start < MAX_LINE:
                        break
                    end = start + MAX_LINE
                    yield _decode(buffer[start:end])
                    start = end
                    continue
                yield _decode(buffer[start:end])
                start = end + 1
            del buffer[:start]
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    if buffer:
        yield _decode(buffer)


def _decode(line: bytes | bytearray) -> str:
    return bytes(line).decode("utf-8", errors="replace").removesuffix("\r")


async def _pump_stdout(stream: ByteReceiveStream, send: MemoryObjectSendStream[str]) -> None:
    async with send:
        try:
            async for line in _split_lines(stream):
                await send.send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the skill stopped reading


@asynccontextmanager
async def run_process(
    argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], grace: float
) -> AsyncIterator[RunningProcess]:
    """Start `argv` (no shell) in a new process group; stop the whole group on exit.

    Leaving the block (normally, by an error or by cancellation) stops the run: SIGTERM to
    the group, `grace` seconds, SIGKILL. The stop runs shielded, so a canceled task still
    leaves no process behind.

    Raises:
        SkillError: the program could not be started (not found, not executable, bad cwd).
    """
    try:
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("cannot start %s (cwd %s): %s", argv[0], cwd, exc)
        # The caller sees the program's name only, not where the hub looked for it.
        name = os.path.basename(argv[0])
        raise SkillError(f"cannot start {name!r}: {exc.strerror or exc}") from None
    assert process.stdout is not None
    assert process.stderr is not None
    send, receive = anyio.create_memory_object_stream[str](_LINE_BUFFER)
    running = RunningProcess(process, receive)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_pump_stdout, process.stdout, send)
            group.start_soon(running._read_stderr, process.stderr)
            group.start_soon(running._watch_exit, grace)
            try:
                yield running
            finally:
                with anyio.CancelScope(shield=True):
                    await running.stop(grace)
                group.cancel_scope.cancel()
    except BaseExceptionGroup as errors:
        # The readers never raise, so the group holds only the caller's own exception:
        # hand it back as it was raised, not wrapped.
        if len(errors.exceptions) == 1:
            raise errors.exceptions[0] from None
        raise
    finally:
        with anyio.CancelScope(shield=True):
            receive.close()
            await process.aclose()
