"""The A2A 1.0 JSON Schema (tests/schemas/a2a-v1.0.schema.json), ready to validate wire
documents: its definitions refer to each other by proto name
(`lf.a2a.v1.AgentSkill.jsonschema.json`), which are resolved here to the definitions of the
same title (`"Agent Skill"`)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA = Path(__file__).parent / "schemas" / "a2a-v1.0.schema.json"
_WELL_KNOWN = frozenset({"Struct", "Timestamp", "Value"})


@cache
def v1_validator(definition: str) -> Draft202012Validator:
    """A validator for one definition of the 1.0 schema, by its title (`"Agent Card"`)."""
    definitions: dict[str, Any] = json.loads(SCHEMA.read_text())["definitions"]
    resources = []
    for title, schema in definitions.items():
        name = title.replace(" ", "")
        package = "google.protobuf" if name in _WELL_KNOWN else "lf.a2a.v1"
        resources.append((f"{package}.{name}.jsonschema.json", Resource.from_contents(schema)))
    registry: Registry[Any] = Registry().with_resources(resources)
    return Draft202012Validator(definitions[definition], registry=registry)


def v1_problems(definition: str, document: object) -> list[str]:
    """What in `document` breaks the 1.0 schema's `definition` (empty: it is valid)."""
    return [
        f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
        for error in v1_validator(definition).iter_errors(document)
    ]
