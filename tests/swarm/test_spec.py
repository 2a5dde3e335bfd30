"""One swarm spec: `SwarmSpec` is what the skill's metadata, `ctx.swarm`'s keywords, the
tools' arguments and the runner's strategies all read, so none can drift from another."""

from __future__ import annotations

from typing import get_args

import pytest

from hub.errors import InvalidParamsError
from hub.skills.swarm import SwarmArguments
from hub.swarm import STRATEGIES, SwarmOptions, SwarmSpec
from hub.swarm.swarm import _STRATEGIES
from hub.tools import ToolArguments, arguments_schema


def test_every_strategy_name_has_its_function_in_the_table() -> None:
    assert tuple(_STRATEGIES) == STRATEGIES


def test_ctx_swarms_keywords_are_the_specs_fields_and_tag() -> None:
    assert set(SwarmOptions.__annotations__) == set(SwarmSpec.model_fields) | {"tag"}


def test_the_swarm_tools_schema_is_the_common_arguments_and_the_specs_fields() -> None:
    schema = arguments_schema(SwarmArguments)
    properties = schema["properties"]
    own = [name for name in SwarmSpec.model_fields if name != "skill"]
    assert list(properties) == [*ToolArguments.model_fields, *own]
    assert schema["required"] == ["message"]
    assert schema["additionalProperties"] is False
    assert properties["strategy"]["enum"] == list(STRATEGIES)
    assert properties["strategy"]["default"] == "broadcast"
    for name, field in SwarmSpec.model_fields.items():
        if name != "skill":  # the tool's `skill` is described as every tool's is
            assert properties[name]["description"] == field.description
    assert {name: properties[name]["type"] for name in ("quorum", "limit", "concurrency")} == {
        "quorum": "integer",
        "limit": "integer",
        "concurrency": "integer",
    }
    assert all(properties[name]["minimum"] == 1 for name in ("quorum", "limit", "concurrency"))
    for name in ("deadline", "branch_deadline"):
        assert (properties[name]["type"], properties[name]["exclusiveMinimum"]) == ("number", 0)
    for name in ("agents", "tags"):
        assert properties[name]["items"] == {"type": "string"}


def test_metadata_keys_are_camel_case_and_agent_skill_and_read_back_the_same() -> None:
    spec = SwarmSpec(
        strategy="map", agents=("a", "b"), skill="summarise", items=[1, 2], branch_deadline=5
    )
    metadata = spec.to_metadata()
    assert metadata == {
        "strategy": "map",
        "agents": ["a", "b"],
        "agentSkill": "summarise",
        "items": [1, 2],
        "branchDeadline": 5.0,
    }
    assert SwarmSpec.from_metadata({**metadata, "skill": "swarm"}) == spec


def test_metadata_may_name_one_agent_or_tag_and_send_the_items_as_a_data_part() -> None:
    spec = SwarmSpec.from_metadata({"agents": "a", "tag": "t"}, data=[["x", "y"]])
    assert (spec.agents, spec.tags, spec.items) == (("a",), ("t",), ["x", "y"])


@pytest.mark.parametrize(
    ("metadata", "field", "said"),
    [
        ({"strategy": "majority"}, "metadata.strategy", "'broadcast', 'race', 'vote'"),
        ({"quorum": 0}, "metadata.quorum", "greater than or equal to 1"),
        ({"branchDeadline": -1}, "metadata.branchDeadline", "greater than 0"),
        ({"concurrency": "many"}, "metadata.concurrency", "'many'"),
    ],
)
def test_an_option_that_does_not_fit_is_an_invalid_params_error_naming_its_key(
    metadata: dict[str, object], field: str, said: str
) -> None:
    with pytest.raises(InvalidParamsError) as refused:
        SwarmSpec.from_metadata(metadata)
    assert refused.value.code == -32602
    [(where, what)] = refused.value.violations
    assert where == field
    assert said in what
    assert field in refused.value.message


def test_the_strategy_type_and_the_names_agree() -> None:
    assert get_args(SwarmSpec.model_fields["strategy"].annotation) == STRATEGIES
