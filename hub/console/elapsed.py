"""Times as an operator reads them in a list: how long ago ("2 min ago"), how long something
took ("1 min 5 s"). The exact moment stays one hover away, in the `<time>` element's title;
`static/tasks.js` words the same "ago" again as the page stays open, by the same rules."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["ago", "exact", "span"]

_MINUTE = 60
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR


def ago(moment: datetime, now: datetime) -> str:
    """How long before `now` `moment` was, in its largest whole unit ("just now" within
    ten seconds; "in the future" for a moment after `now`, as a skewed clock can give)."""
    seconds = int((now - moment).total_seconds())
    if seconds < -10:
        return "in the future"
    if seconds < 10:
        return "just now"
    if seconds < _MINUTE:
        return f"{seconds} s ago"
    if seconds < _HOUR:
        return f"{seconds // _MINUTE} min ago"
    if seconds < _DAY:
        return f"{seconds // _HOUR} h ago"
    return f"{seconds // _DAY} d ago"


def span(seconds: float) -> str:
    """A duration in its two largest units ("850 ms", "4.2 s", "1 min 5 s", "2 h 10 min")."""
    if seconds < 1:
        return f"{max(seconds, 0) * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < _MINUTE:
        return f"{whole} s"
    if whole < _HOUR:
        return f"{whole // _MINUTE} min {whole % _MINUTE} s"
    if whole < _DAY:
        return f"{whole // _HOUR} h {whole % _HOUR // _MINUTE} min"
    return f"{whole // _DAY} d {whole % _DAY // _HOUR} h"


def exact(moment: datetime) -> str:
    """The full moment, to the second, in UTC as the store keeps it ("2026-01-31 12:00:05
    UTC")."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
