"""How the benchmarks print a figure measured over several rounds: the median, then the
lowest and highest value, as `median (min to max)`, the two joined by an en dash."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

__all__ = ["spread"]


def spread(values: Sequence[float], digits: int = 2) -> str:
    """`median (min to max)` of `values`, each with `digits` decimals."""
    return (
        f"{statistics.median(values):,.{digits}f} "
        f"({min(values):,.{digits}f}\N{EN DASH}{max(values):,.{digits}f})"
    )
