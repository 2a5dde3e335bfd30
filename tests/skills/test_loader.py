"""`load_skills`: built-in names, `module:` imports, and the ConfigErrors for every mistake."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.config import SkillRef
from hub.errors import ConfigError
from hub.skills import BUILTIN_SKILLS, Skill, load_skills
from hub.skills.echo import echo

SKILLS_MODULE = """
from hub import SkillContext, skill


@skill(id="greet", description="says hello", tags=["greeting"])
async def greet(ctx: SkillContext) -> str:
    return "hello " + ctx.message.text()


@skill(id="echo", description="a second skill with the built-in's id")
async def another_echo(ctx: SkillContext) -> str:
    return "again"


async def plain(ctx: SkillContext) -> str:
    return "not decorated"


NOT_A_FUNCTION = 42
"""


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh package `<name>` with a `skills` module, importable from a temporary folder."""
    name = f"loader_pkg_{uuid.uuid4().hex[:12]}"
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "skills.py").write_text(SKILLS_MODULE)
    (root / "broken.py").write_text("import loader_dependency_that_is_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[module]


def test_a_builtin_name_gives_the_builtin_skill() -> None:
    assert load_skills([SkillRef(builtin="echo")]) == {"echo": echo}
    assert BUILTIN_SKILLS["echo"] is echo


def test_no_skills_configured_gives_no_skills() -> None:
    assert load_skills([]) == {}


def test_a_module_skill_from_a_package_on_the_path_loads(package: str) -> None:
    skills = load_skills([SkillRef(builtin="echo"), SkillRef(module=f"{package}.skills:greet")])
    assert list(skills) == ["echo", "greet"]
    greet = skills["greet"]
    assert isinstance(greet, Skill)
    assert greet is sys.modules[f"{package}.skills"].greet
    assert greet.card.description == "says hello"
    assert greet.card.tags == ["greeting"]


def test_a_module_skill_is_imported_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"cwd_skills_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{name}.py").write_text(SKILLS_MODULE)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.chdir(tmp_path)
    try:
        skills = load_skills([SkillRef(module=f"{name}:greet")])
    finally:
        sys.modules.pop(name, None)
    assert list(skills) == ["greet"]


def test_an_unknown_builtin_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'ech'"):
        load_skills([SkillRef(builtin="ech")])


def test_an_unknown_builtin_close_to_a_known_one_says_which_was_meant() -> None:
    with pytest.raises(ConfigError) as caught:
        load_skills([SkillRef(builtin="delegat")])
    assert str(caught.value) == (
        "unknown built-in skill 'delegat'; did you mean 'delegate'? "
        "(known: delegate, echo, federation, swarm)"
    )


@pytest.mark.parametrize(
    "reference",
    [
        pytest.param("loader_no_such_package_here.skills:greet", id="missing-module"),
        pytest.param("{package}.no_such_module:greet", id="missing-submodule"),
        pytest.param("{package}.broken:greet", id="module-whose-import-fails"),
        pytest.param(":greet", id="empty-module-name"),
        pytest.param(".skills:greet", id="relative-module-name"),
    ],
)
def test_a_module_that_cannot_be_imported_is_a_config_error(package: str, reference: str) -> None:
    reference = reference.format(package=package)
    with pytest.raises(ConfigError) as caught:
        load_skills([SkillRef(module=reference)])
    assert f"'{reference}'" in str(caught.value)


@pytest.mark.parametrize("attribute", ["nothing_here", ""])
def test_a_missing_attribute_is_a_config_error(package: str, attribute: str) -> None:
    reference = f"{package}.skills:{attribute}"
    with pytest.raises(ConfigError) as caught:
        load_skills([SkillRef(module=reference)])
    assert f"'{reference}'" in str(caught.value)


@pytest.mark.parametrize("attribute", ["plain", "NOT_A_FUNCTION", "skill"])
def test_something_that_is_not_a_decorated_skill_is_a_config_error(
    package: str, attribute: str
) -> None:
    reference = f"{package}.skills:{attribute}"
    with pytest.raises(ConfigError) as caught:
        load_skills([SkillRef(module=reference)])
    assert "@hub.skill" in str(caught.value)


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param([SkillRef(builtin="echo"), SkillRef(builtin="echo")], id="builtin-twice"),
        pytest.param(
            [SkillRef(builtin="echo"), SkillRef(module="{package}.skills:another_echo")],
            id="module-with-a-builtin-id",
        ),
        pytest.param(
            [SkillRef(module="{package}.skills:greet"), SkillRef(module="{package}.skills:greet")],
            id="module-twice",
        ),
    ],
)
def test_two_skills_with_one_id_are_a_config_error(package: str, refs: list[SkillRef]) -> None:
    refs = [
        SkillRef(module=ref.module.format(package=package)) if ref.module else ref for ref in refs
    ]
    with pytest.raises(ConfigError) as caught:
        load_skills(refs)
    duplicated = "greet" if refs[0].module else "echo"
    assert f"'{duplicated}'" in str(caught.value)
