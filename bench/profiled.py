"""The hub's command line under cProfile, timed by CPU (`time.process_time`), not wall clock.

The profile is written to the file named first when the hub exits (SIGTERM included), for
`pstats` to read; the rest of the arguments are the hub's own:

    python -m bench.profiled var/hub.prof serve --config bench/hub.yaml --port 8000
"""

from __future__ import annotations

import cProfile
import signal
import sys
import time

from hub.cli import main

__all__: list[str] = []


def _exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    # uvicorn restores the handler it found and raises the signal again once it has stopped:
    # this one ends the program through `finally`, where the default would end it at once.
    signal.signal(signal.SIGTERM, _exit)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        main(sys.argv[2:])
    finally:
        profiler.disable()
        profiler.dump_stats(sys.argv[1])
