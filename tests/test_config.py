"""Settings: every kind of mistake in config/hub.yaml, precedence, and the unit parsers."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from hub.config import (
    CardSettings,
    LimitSettings,
    ProcessSkillSettings,
    ServerSettings,
    Settings,
    SkillRef,
    StoreSettings,
    load_settings,
    parse_duration,
    parse_size,
)
from hub.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, text: str, name: str = "hub.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: Path | None, *, env: dict[str, str] | None = None, **kw: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, env={} if env is None else env, **kw)
    return str(caught.value)


# --- mistakes in the file ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fragments"),
    [
        pytest.param(
            "server:\n  port: 1\nsevrer: {}\n",
            3,
            ["'sevrer'", "did you mean 'server'"],
            id="unknown-top-level-key",
        ),
        pytest.param(
            "server:\n  host: x\n  prot: 9\n",
            3,
            ["'server.prot'", "did you mean 'port'"],
            id="unknown-nested-key",
        ),
        pytest.param(
            "limits:\n  max_tasks: 5\n  max_task_ttl: 1h\n",
            3,
            ["'limits.max_task_ttl'", "did you mean 'task_ttl'"],
            id="unknown-limits-key",
        ),
        pytest.param(
            "skills:\n  - builtin: echo\n  - buitin: echo\n",
            3,
            ["'skills.1.buitin'", "did you mean 'builtin'"],
            id="unknown-key-in-a-skill-entry",
        ),
        pytest.param(
            "card:\n  name: x\n  provider:\n    organisation: me\n    url: http://x\n",
            4,
            ["'card.provider.organisation'", "did you mean 'organization'"],
            id="unknown-key-two-levels-down",
        ),
        pytest.param("server:\n  port: abc\n", 2, ["server.port"], id="wrong-type"),
        pytest.param("server:\n  port: 70000\n", 2, ["server.port"], id="port-out-of-range"),
        pytest.param("server:\n  log_level: loud\n", 2, ["server.log_level"], id="bad-literal"),
        pytest.param("store:\n  kind: redis\n", 2, ["store.kind"], id="unknown-store-kind"),
        pytest.param("limits:\n  max_tasks: 0\n", 2, ["limits.max_tasks"], id="limit-below-one"),
        pytest.param("limits:\n  task_ttl: 5 weeks\n", 2, ["limits.task_ttl"], id="bad-duration"),
        pytest.param("limits:\n  task_ttl: 0s\n", 2, ["limits.task_ttl"], id="zero-duration"),
        pytest.param("limits:\n  task_ttl: .nan\n", 2, ["limits.task_ttl"], id="nan-duration"),
        pytest.param("server:\n  keepalive: soon\n", 2, ["server.keepalive"], id="bad-keepalive"),
        pytest.param("limits:\n  max_body: 1TiB\n", 2, ["limits.max_body"], id="bad-size"),
        pytest.param("limits:\n  max_body: 1.5MiB\n", 2, ["limits.max_body"], id="fractional-size"),
        pytest.param(
            "skills:\n  - builtin: echo\n    module: a.b:c\n",
            2,
            ["skills.0", "exactly one"],
            id="skill-with-builtin-and-module",
        ),
        pytest.param("skills:\n  - {}\n", 2, ["skills.0", "exactly one"], id="empty-skill"),
        pytest.param(
            "skills:\n  - builtin: echo\n  - module: pkg.mod\n",
            3,
            ["skills.1", "'package.module:function'"],
            id="module-without-colon",
        ),
        pytest.param("skills: echo\n", 1, ["skills"], id="skills-not-a-list"),
    ],
)
def test_a_mistake_in_the_file_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, fragments: list[str]
) -> None:
    path = write(tmp_path, text)
    message = config_error(path)
    assert f"{path}:{line}:" in message
    for fragment in fragments:
        assert fragment in message


def test_several_mistakes_are_reported_together_one_per_line(tmp_path: Path) -> None:
    path = write(tmp_path, "server:\n  port: abc\nlimits:\n  max_body: lots\n")
    lines = config_error(path).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}:2:")
    assert lines[1].startswith(f"{path}:4:")


def test_an_unknown_key_with_nothing_close_gets_no_suggestion(tmp_path: Path) -> None:
    message = config_error(write(tmp_path, "server:\n  zzzzzz: 1\n"))
    assert "did you mean" not in message
    assert "(known: host, port" in message


def test_a_missing_environment_variable_names_the_file_and_the_variable(tmp_path: Path) -> None:
    path = write(tmp_path, "store:\n  path: ${HUB_TEST_DATA_DIR}/hub.db\n")
    message = config_error(path, env={"OTHER": "x"})
    assert message.startswith(f"{path}:")
    assert "HUB_TEST_DATA_DIR" in message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        pytest.param("server:\n  host: a\n   port: 2\n", 3, id="bad-indentation"),
        pytest.param(
            "agents: a.yaml\nskills:\n  - builtin: echo\n - module: x:y\n", 4, id="dedent"
        ),
        pytest.param("card:\n  name: 'unterminated\n", 3, id="unterminated-quote"),
    ],
)
def test_a_yaml_syntax_error_names_the_line(tmp_path: Path, text: str, line: int) -> None:
    path = write(tmp_path, text)
    message = config_error(path)
    assert f"{path}:{line}:" in message
    assert "not valid YAML" in message


@pytest.mark.parametrize("text", ["- builtin: echo\n", "just a string\n", "42\n"])
def test_a_top_level_that_is_not_a_mapping_is_refused(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    assert config_error(path).startswith(f"{path}:")


def test_a_missing_named_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert config_error(missing).startswith(f"{missing}:")


def test_a_missing_file_named_by_hub_config_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert config_error(None, env={"HUB_CONFIG": str(missing)}).startswith(f"{missing}:")


def test_a_wrong_override_without_a_file_names_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = config_error(None, env={"HUB_PORT": "eighty"})
    assert "server.port" in message


def test_an_unknown_hub_variable_with_a_section_is_an_unknown_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = config_error(None, env={"HUB_SERVER__PROT": "1"})
    assert "'server.prot'" in message
    assert "did you mean 'port'" in message


def test_a_mistake_in_an_environment_override_is_not_blamed_on_a_line_of_the_file(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "server:\n  host: 127.0.0.1\n  port: 8000\n")
    message = config_error(path, env={"HUB_SERVER__PROT": "1"})
    assert f"{path}:" not in message
    assert "HUB_SERVER__PROT" in message
    assert "did you mean 'port'" in message
    typed = config_error(path, env={"HUB_PORT": "abc"})
    assert "HUB_PORT" in typed
    assert f"{path}:" not in typed


# --- what loads ------------------------------------------------------------------------------


def test_no_file_at_all_gives_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(env={})
    assert settings == Settings()
    assert settings.skills == [SkillRef(builtin="echo")]
    assert settings.server.base_url() == "http://127.0.0.1:8000"


def test_an_empty_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_settings(write(tmp_path, "# nothing yet\n"), env={}) == Settings()


def test_config_hub_yaml_in_the_working_directory_is_read_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config").mkdir()
    write(tmp_path / "config", "server:\n  port: 1234\n")
    monkeypatch.chdir(tmp_path)
    assert load_settings(env={}).server.port == 1234


def test_hub_config_names_the_file_when_no_path_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "server:\n  port: 4321\n", name="elsewhere.yaml")
    assert load_settings(env={"HUB_CONFIG": str(path)}).server.port == 4321


def test_an_explicit_path_wins_over_hub_config(tmp_path: Path) -> None:
    chosen = write(tmp_path, "server:\n  port: 1111\n", name="chosen.yaml")
    other = write(tmp_path, "server:\n  port: 2222\n", name="other.yaml")
    settings = load_settings(chosen, env={"HUB_CONFIG": str(other)})
    assert settings.server.port == 1111


def test_environment_variables_are_expanded_in_string_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "store:\n  path: ${DATA}/hub.db\n"
        "skills:\n  - module: ${PKG}.skills:greet\n"
        "card:\n  provider: {organization: '${ORG} Ltd', url: 'http://${HOST}'}\n",
    )
    env = {"DATA": "/srv/hub", "PKG": "acme", "ORG": "Acme", "HOST": "acme.test"}
    settings = load_settings(path, env=env)
    assert settings.store.path == "/srv/hub/hub.db"
    assert settings.skills == [SkillRef(module="acme.skills:greet")]
    assert settings.card.provider is not None
    assert settings.card.provider.organization == "Acme Ltd"
    assert settings.card.provider.url == "http://acme.test"


def test_units_in_the_file_become_seconds_and_bytes(tmp_path: Path) -> None:
    path = write(
        tmp_path, "server:\n  keepalive: 500ms\nlimits:\n  task_ttl: 2d\n  max_body: 512KiB\n"
    )
    settings = load_settings(path, env={})
    assert settings.server.keepalive == 0.5
    assert settings.limits.task_ttl == 2 * 86400.0
    assert settings.limits.max_body == 512 * 1024


# --- precedence ------------------------------------------------------------------------------


def test_environment_beats_the_file_and_overrides_beat_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "server:\n  port: 1001\n  host: 10.0.0.1\nlimits:\n  max_tasks: 7\n")
    env = {"HUB_SERVER__PORT": "1002", "HUB_LIMITS__MAX_TASKS": "8"}

    from_file = load_settings(path, env={})
    from_env = load_settings(path, env=env)
    from_flags = load_settings(path, env=env, overrides={"server.port": 1003})

    assert (from_file.server.port, from_file.limits.max_tasks) == (1001, 7)
    assert (from_env.server.port, from_env.limits.max_tasks) == (1002, 8)
    assert (from_flags.server.port, from_flags.limits.max_tasks) == (1003, 8)
    assert from_flags.server.host == "10.0.0.1"


def test_environment_overrides_apply_with_no_file_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(
        env={"HUB_LIMITS__TASK_TTL": "2h", "HUB_CARD__STREAMING": "false"},
        overrides={"limits.max_body": "2KiB"},
    )
    assert settings.limits.task_ttl == 7200.0
    assert settings.limits.max_body == 2048
    assert settings.card.streaming is False


@pytest.mark.parametrize(
    ("name", "value", "section", "key", "expected"),
    [
        ("HUB_HOST", "0.0.0.0", "server", "host", "0.0.0.0"),
        ("HUB_PORT", "9000", "server", "port", 9000),
        ("HUB_PUBLIC_URL", "https://hub.test", "server", "public_url", "https://hub.test"),
        ("HUB_LOG_LEVEL", "debug", "server", "log_level", "debug"),
        ("HUB_STORE", "/tmp/x.db", "store", "path", "/tmp/x.db"),
        ("HUB_STORE_KIND", "memory", "store", "kind", "memory"),
        ("HUB_AGENTS", "partners.yaml", None, "agents", "partners.yaml"),
    ],
)
def test_short_environment_names_set_their_keys(
    tmp_path: Path, name: str, value: str, section: str | None, key: str, expected: object
) -> None:
    path = write(tmp_path, "server:\n  host: 127.0.0.2\n  port: 1\n")
    settings = load_settings(path, env={name: value})
    owner = settings if section is None else getattr(settings, section)
    assert getattr(owner, key) == expected


def test_variables_that_are_not_settings_are_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, "server:\n  port: 1\n")
    env = {"HUB_CONFIG": str(path), "HUB_SOMETHING": "x", "HOME": "/root", "PATH": "/bin"}
    assert load_settings(path, env=env) == load_settings(path, env={})


# --- the repository's own file and the docs -----------------------------------------------------


def _keys(node: object, prefix: str = "") -> list[str]:
    keys = []
    if isinstance(node, dict):
        for key, value in node.items():
            keys.append(f"{prefix}{key}")
            keys.extend(_keys(value, f"{prefix}{key}."))
    elif isinstance(node, list):
        for item in node:
            keys.extend(_keys(item, prefix))
    return keys


def _model_at(dotted: str) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Settings
    for step in dotted.split("."):
        if model is None or step not in model.model_fields:
            return None
        annotation = model.model_fields[step].annotation
        candidates = (annotation, *getattr(annotation, "__args__", ()))
        model = next(
            (c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None
        )
    return model


def test_the_repository_config_loads_and_every_key_is_a_documented_setting() -> None:
    path = ROOT / "config" / "hub.yaml"
    settings = load_settings(path, env={})
    assert settings.server.port == 8000
    assert settings.limits.task_ttl == 3600.0
    assert settings.limits.max_body == 1024 * 1024
    assert settings.skills == [
        SkillRef(builtin="echo"),
        SkillRef(builtin="delegate"),
        SkillRef(builtin="swarm"),
    ]

    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for dotted in _keys(yaml.safe_load(path.read_text(encoding="utf-8"))):
        parent, _, leaf = dotted.rpartition(".")
        owner = _model_at(parent) if parent else Settings
        assert owner is not None, dotted
        assert leaf in owner.model_fields, dotted
        assert re.search(rf"`{leaf}[`:]", docs), f"{dotted} is not in docs/configuration.md"


def _documented_fields(model: type[BaseModel]) -> list[str]:
    names = []
    for name, field in model.model_fields.items():
        names.append(name)
        annotation = field.annotation
        for candidate in (annotation, *getattr(annotation, "__args__", ())):
            if (
                isinstance(candidate, type)
                and issubclass(candidate, BaseModel)
                and candidate is not ProcessSkillSettings  # documented in docs/skills.md
            ):
                names.extend(_documented_fields(candidate))
    return names


def test_every_setting_is_named_in_the_configuration_docs() -> None:
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = [name for name in _documented_fields(Settings) if not re.search(rf"\b{name}\b", docs)]
    assert missing == []


@pytest.mark.parametrize(
    ("section", "model"),
    [
        ("server", ServerSettings),
        ("store", StoreSettings),
        ("limits", LimitSettings),
        ("card", CardSettings),
    ],
)
def test_defaults_in_the_docs_tables_are_the_real_defaults(
    section: str, model: type[BaseModel]
) -> None:
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = docs.split(f"## `{section}`", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `([^`{}]+)` \|", table, flags=re.MULTILINE)
    assert rows, f"no table of defaults under {section}"
    defaults = model()
    for key, written in rows:
        documented = model.model_validate({key: yaml.safe_load(written)})
        assert getattr(documented, key) == getattr(defaults, key), f"{section}.{key}"


# --- parse_duration and parse_size ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (90, 90.0),
        (1.5, 1.5),
        ("90", 90.0),
        ("0.5", 0.5),
        ("250ms", 0.25),
        ("1.5s", 1.5),
        ("30s", 30.0),
        ("10m", 600.0),
        ("1h", 3600.0),
        ("2d", 172800.0),
        (" 2 h ", 7200.0),
    ],
)
def test_durations_are_read_as_seconds(value: object, seconds: float) -> None:
    assert parse_duration(value) == seconds


@pytest.mark.parametrize(
    "value",
    [0, -1, 0.0, "0s", "-5s", "", "s", "1w", "1H", "1e3", ".5s", "1,5s", "1 h 30 m", True, None],
)
def test_bad_durations_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(value)


def test_nan_is_not_a_duration() -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(math.nan)


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (65536, 65536),
        ("65536", 65536),
        ("10 B", 10),
        ("1KB", 1000),
        ("1kb", 1000),
        ("512KiB", 512 * 1024),
        ("1MB", 1000**2),
        ("1MiB", 1024**2),
        ("1 mib", 1024**2),
        ("2GB", 2 * 1000**3),
        ("2GiB", 2 * 1024**3),
    ],
)
def test_sizes_are_read_as_bytes(value: object, size: int) -> None:
    assert parse_size(value) == size


@pytest.mark.parametrize(
    "value", [0, -1, "0", "0KiB", "1.5MiB", 1.5, "1TiB", "MiB", "", "1_000", True, None]
)
def test_bad_sizes_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(value)


DURATION_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
SIZE_UNITS = {
    "": 1,
    "B": 1,
    "KB": 1000,
    "KiB": 1024,
    "MB": 1000**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "GiB": 1024**3,
}
spaces = st.sampled_from(["", " ", "  ", "\t"])


@given(
    number=st.integers(min_value=1, max_value=10**6),
    unit=st.sampled_from(sorted(DURATION_UNITS)),
    before=spaces,
    between=spaces,
    after=spaces,
)
def test_a_whole_number_with_a_unit_is_that_many_units(
    number: int, unit: str, before: str, between: str, after: str
) -> None:
    text = f"{before}{number}{between}{unit}{after}"
    assert parse_duration(text) == pytest.approx(number * DURATION_UNITS[unit])


@given(seconds=st.floats(min_value=1e-6, max_value=1e9))
def test_a_positive_number_of_seconds_is_kept_as_it_is(seconds: float) -> None:
    assert parse_duration(seconds) == seconds


@given(
    number=st.integers(min_value=1, max_value=10**9),
    unit=st.sampled_from(sorted(SIZE_UNITS)),
    upper=st.booleans(),
    between=spaces,
)
def test_a_whole_number_with_a_size_unit_is_that_many_bytes(
    number: int, unit: str, upper: bool, between: str
) -> None:
    written = unit.upper() if upper else unit.lower()
    assert parse_size(f"{number}{between}{written}") == number * SIZE_UNITS[unit]


@given(text=st.text(max_size=20))
def test_any_text_is_a_positive_duration_or_a_value_error(text: str) -> None:
    try:
        seconds = parse_duration(text)
    except ValueError:
        return
    assert seconds > 0


@given(text=st.text(max_size=20))
def test_any_text_is_a_positive_size_or_a_value_error(text: str) -> None:
    try:
        size = parse_size(text)
    except ValueError:
        return
    assert isinstance(size, int)
    assert size > 0


# --- duplicate keys, overrides over a wrong file, the default skill ----------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "server:\n  port: 1\n  port: 2\n",
            "duplicate key 'port' (first set on line 2); keep one of them",
            id="nested",
        ),
        pytest.param(
            "store: {kind: memory}\nserver: {}\nstore: {kind: sqlite}\n",
            "duplicate key 'store' (first set on line 1); keep one of them",
            id="top-level",
        ),
    ],
)
def test_a_duplicate_key_is_an_error_naming_both_lines(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    assert config_error(path) == f"{path}:3: {message}"


def test_a_duplicate_key_in_agents_yaml_is_an_error_too(tmp_path: Path) -> None:
    from hub.registry import load_registry

    path = write(
        tmp_path,
        "version: 1\nagents:\n  - name: a\n    url: http://a\n    url: http://b\n",
        name="agents.yaml",
    )
    with pytest.raises(ConfigError) as caught:
        load_registry(path, env={})
    assert str(caught.value).startswith(f"{path}:5: duplicate key 'url' (first set on line 4)")


def test_an_override_does_not_hide_a_wrong_value_in_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "store: {kind: memory}\nserver:\n  port: eighty\n")
    message = config_error(path, overrides={"server.port": 8001})
    assert message.startswith(f"{path}:3: server.port: ")


def test_an_override_of_a_right_file_still_wins(tmp_path: Path) -> None:
    path = write(tmp_path, "server:\n  port: 8000\n")
    assert load_settings(path, env={}, overrides={"server.port": 8001}).server.port == 8001


def _hub_default(tmp_path: Path, text: str) -> str:
    from hub import Hub

    path = write(tmp_path, "store: {kind: memory}\n" + text)
    return Hub.from_config(path, env={}).settings.default_skill


def test_without_skills_only_echo_is_served_and_is_the_default(tmp_path: Path) -> None:
    assert _hub_default(tmp_path, "") == "echo"


def test_a_config_that_lists_skills_and_no_default_answers_with_the_first(
    tmp_path: Path,
) -> None:
    text = "skills:\n  - module: tests.runtime_skills:shout\n  - builtin: echo\n"
    assert _hub_default(tmp_path, text) == "shout"


def test_a_default_skill_that_is_not_listed_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _hub_default(
            tmp_path, "skills:\n  - module: tests.runtime_skills:shout\ndefault_skill: echo\n"
        )
    assert str(caught.value) == (
        f"{tmp_path / 'hub.yaml'}:4: default_skill 'echo' is not among the configured skills "
        "(known: shout); name one of them, or leave default_skill out to use the first"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param(
            "builtin: ecko",
            "unknown built-in skill 'ecko'; did you mean 'echo'? (known: ",
            id="unknown-builtin",
        ),
        pytest.param(
            "module: tests.no_such_module:skill",
            "skill 'tests.no_such_module:skill': cannot import module tests.no_such_module",
            id="failed-import",
        ),
        pytest.param(
            "module: tests.runtime_skills:shout",
            "two skills have the id 'shout'; skill ids must be unique",
            id="duplicate-id",
        ),
    ],
)
def test_a_skill_that_cannot_be_loaded_is_reported_at_its_entry(
    tmp_path: Path, entry: str, message: str
) -> None:
    text = f"skills:\n  - builtin: echo\n  - module: tests.runtime_skills:shout\n  - {entry}\n"
    with pytest.raises(ConfigError) as caught:
        _hub_default(tmp_path, text)
    assert str(caught.value).startswith(f"{tmp_path / 'hub.yaml'}:5: {message}")
