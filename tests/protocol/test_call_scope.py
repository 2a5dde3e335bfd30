"""The call scope: what a span's work inherits from its scope, and `use_scope`'s nesting."""

from __future__ import annotations

import dataclasses

from hub.protocol.extensions import ExtensionRelay
from hub.protocol.trace import Allowed, CallScope, current_scope, use_scope


def _every_field_set() -> CallScope:
    return CallScope(
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        parent_id="00f067aa0ba902b7",
        flags="00",
        deadline=123.5,
        trail=("http://hub-a", "http://hub-b"),
        caller="ops",
        skills=frozenset({"echo"}),
        agents=Allowed.of({"weather"}),
        extensions=frozenset({"https://example.com/ext/v1"}),
        forward_extensions=ExtensionRelay(requested=frozenset({"https://example.com/ext/v1"})),
        recorded=False,
    )


def test_inside_a_span_the_scope_keeps_everything_but_its_parent_and_flags() -> None:
    scope = _every_field_set()

    inner = scope.inside("b7ad6b7169203331", "01")

    assert inner == dataclasses.replace(
        scope, parent_id="b7ad6b7169203331", flags="01", recorded=True
    )
    # Every field is checked, whatever fields the scope gains.
    for field in dataclasses.fields(CallScope):
        if field.name not in {"parent_id", "flags", "recorded"}:
            assert getattr(inner, field.name) == getattr(scope, field.name), field.name


def test_use_scope_nests_and_restores_the_outer_scope() -> None:
    outer, inner = CallScope.new(), CallScope.new()

    with use_scope(outer) as entered:
        assert entered is outer
        with use_scope(inner):
            assert current_scope() is inner
        with use_scope(None) as kept:
            assert kept is outer
            assert current_scope() is outer
        assert current_scope() is outer
    assert current_scope() is None


def test_use_scope_restores_the_outer_scope_when_the_block_raises() -> None:
    outer = CallScope.new()

    with use_scope(outer):
        try:
            with use_scope(CallScope.new()):
                raise LookupError("inside")
        except LookupError:
            pass
        assert current_scope() is outer
