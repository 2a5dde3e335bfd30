"""`a2a-hub swarm`'s flags build the one `SwarmSpec`: every field has its flag, and each
flag lands in its field."""

from __future__ import annotations

import pytest

from hub.cli.agents import _swarm_spec
from hub.cli.outcome import UsageError
from hub.cli.parser import build_parser
from hub.swarm import SwarmSpec


def _parsed(*argv: str) -> SwarmSpec:
    parser, _ = build_parser()
    return _swarm_spec(parser.parse_args(["swarm", "hello", *argv]))


def test_every_flag_lands_in_its_field_of_the_swarm_spec() -> None:
    spec = _parsed(
        "--strategy", "map", "--agent", "a", "--agent", "b", "--tag", "t", "--skill", "s",
        "--limit", "2", "--quorum", "2", "--judge", "a2a_j", "--items", "[1, 2]",
        "--concurrency", "3", "--deadline", "9", "--branch-deadline", "4",
        "--agents", "elsewhere.yaml",
    )  # fmt: skip

    assert spec == SwarmSpec(
        strategy="map",
        agents=("a", "b"),
        tags=("t",),
        skill="s",
        limit=2,
        quorum=2,
        judge="a2a_j",
        items=[1, 2],
        concurrency=3,
        deadline=9,
        branch_deadline=4,
    )


def test_the_defaults_are_a_broadcast_eight_branches_at_once() -> None:
    assert _parsed("--agents", "elsewhere.yaml") == SwarmSpec(concurrency=8)


def test_items_that_are_not_a_json_list_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--items must be a JSON list"):
        _parsed("--items", '{"a": 1}')
