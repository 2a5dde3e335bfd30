"""Values written by hand in settings files: durations (`30s`, `2m`), sizes (`1MiB`), and
`${NAME}` references to environment variables."""

from __future__ import annotations

import re

__all__ = ["ENV_REF", "parse_duration", "parse_size"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
_SIZE = re.compile(r"^\s*(\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def parse_duration(value: object) -> float:
    """Seconds from a number or a string such as `90`, `1.5s`, `30m`, `1h`, `2d`."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string like '30s', '1h'")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if match is None:
            raise ValueError(f"{value!r} is not a duration; write e.g. 30s, 10m, 1h or 2d")
        seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if not seconds > 0:  # also refuses NaN (YAML .nan)
        raise ValueError("a duration must be greater than zero")
    return seconds


def parse_size(value: object) -> int:
    """Bytes from a number or a string such as `65536`, `512KiB`, `1MiB`."""
    if isinstance(value, bool):
        raise ValueError("a size is a number of bytes or a string like '1MiB'")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.match(str(value))
        if match is None:
            raise ValueError(f"{value!r} is not a size; write e.g. 65536, 512KiB or 1MiB")
        size = int(match.group(1)) * _SIZE_UNITS[(match.group(2) or "b").lower()]
    if size <= 0:
        raise ValueError("a size must be greater than zero")
    return size
