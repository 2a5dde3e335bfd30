"""Reading settings files: YAML into strict models, `${NAME}` expansion, `HUB_*` overrides, and
errors that name the file, the line and the key."""

from __future__ import annotations

import copy
import difflib
import os
import re
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from hub.config.settings import Settings
from hub.config.values import ENV_REF
from hub.errors import ConfigError

__all__ = [
    "describe_validation_error",
    "load_settings",
    "load_yaml_model",
    "locate",
    "settle_default_skill",
]

M = TypeVar("M", bound=BaseModel)


def _expand_env(node: Any, env: Mapping[str, str], where: str) -> Any:
    if isinstance(node, str):

        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ConfigError(f"{where}: environment variable {name} is not set")
            return env[name]

        return ENV_REF.sub(replace, node)
    if isinstance(node, list):
        return [_expand_env(item, env, where) for item in node]
    if isinstance(node, dict):
        return {key: _expand_env(value, env, where) for key, value in node.items()}
    return node


def _line_of(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the key at `loc`, or of its nearest parent that exists."""
    node, line = root, None
    for step in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            pairs = [pair for pair in node.value if getattr(pair[0], "value", None) == step]
            if not pairs:
                break
            key_node, node = pairs[0]
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
            node = node.value[step] if step < len(node.value) else None
            if node is not None:
                line = node.start_mark.line + 1
        else:
            break
    return line


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    current: Any = model
    for step in loc[:-1]:
        if isinstance(step, int):
            continue
        field = getattr(current, "model_fields", {}).get(step)
        if field is None:
            return []
        annotation = field.annotation
        for candidate in (annotation, *getattr(annotation, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                current = candidate
                break
    return list(getattr(current, "model_fields", {}))


def describe_validation_error(
    error: ValidationError,
    *,
    source: str,
    model: type[BaseModel],
    root: yaml.Node | None,
    origins: Mapping[str, str] = {},
) -> str:
    """One line per problem: `file:line: key: what is wrong (did you mean ...?)`.

    A key set by an override is reported under the override's name (`origins` maps a dotted
    key to it, e.g. `server.port` -> `HUB_PORT`), not under a line of the file.
    """
    lines = []
    for problem in error.errors():
        loc = tuple(problem["loc"])
        key = ".".join(str(step) for step in loc) or "(top level)"
        origin = next(
            (
                name
                for dotted, name in origins.items()
                if key == dotted or key.startswith(dotted + ".")
            ),
            None,
        )
        line = _line_of(root, loc)
        where = origin or (f"{source}:{line}" if line else source)
        if problem["type"] == "extra_forbidden" and loc:
            known = _known_keys(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            lines.append(f"{where}: unknown key '{key}'{hint} (known: {', '.join(known)})")
        else:
            lines.append(f"{where}: {key}: {problem['msg']}")
    return "\n".join(lines)


def load_yaml_model(
    path: Path,
    model: type[M],
    *,
    env: Mapping[str, str],
    overrides: Mapping[str, Any] = {},
    origins: Mapping[str, str] = {},
    check_raw: Callable[[dict[str, Any], yaml.Node | None], None] | None = None,
) -> M:
    """Read a YAML file into a strict model, with `${ENV}` expansion and line-accurate errors.

    Args:
        path: the YAML file.
        model: the pydantic model the document must match.
        env: where `${NAME}` references are looked up.
        overrides: dotted keys (`server.port`) set after the file is read.
        origins: where each override came from, for error messages (`HUB_PORT`, `--port`).
        check_raw: called with the document as written (before `${NAME}` expansion) and its
            YAML node tree, for rules about the text itself (such as secrets written only as
            references); it raises ConfigError.

    Raises:
        ConfigError: the file is missing, is not YAML, or does not match the model.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror})") from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys to values")
    _refuse_duplicate_keys(root, str(path))
    if check_raw is not None:
        check_raw(data, root)
    data = _expand_env(data, env, str(path))
    if overrides:
        # The file is checked as written first: a flag or variable that replaces a key must
        # not hide that the file's own value is wrong (it would break the next run without it).
        _validate(model, copy.deepcopy(data), source=str(path), root=root, origins={})
    for dotted, value in overrides.items():
        _set_dotted(data, dotted, value)
    return _validate(model, data, source=str(path), root=root, origins=origins)


def _refuse_duplicate_keys(node: yaml.Node | None, source: str) -> None:
    """YAML keeps the last of two equal keys without a word; a settings file that says a thing
    twice is a mistake, so it is an error naming both lines."""
    if isinstance(node, yaml.MappingNode):
        first_seen: dict[object, int] = {}
        for key_node, value_node in node.value:
            key = getattr(key_node, "value", None)
            line = key_node.start_mark.line + 1
            if isinstance(key, str) and key in first_seen:
                raise ConfigError(
                    f"{source}:{line}: duplicate key '{key}' (first set on line "
                    f"{first_seen[key]}); keep one of them"
                )
            if isinstance(key, str):
                first_seen[key] = line
            _refuse_duplicate_keys(value_node, source)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_duplicate_keys(item, source)


def settle_default_skill(settings: Settings, skill_ids: Sequence[str]) -> Settings:
    """The settings with the default skill settled: the one `default_skill` names, else (when
    the settings do not name one) the first skill served, so a config that lists its own
    skills needs no `default_skill` (and without `skills:` only `echo` is served).

    Raises:
        ConfigError: `default_skill` names a skill that is not served.
    """
    if "default_skill" not in settings.model_fields_set:
        if skill_ids and settings.default_skill != skill_ids[0]:
            return settings.model_copy(update={"default_skill": skill_ids[0]})
        return settings
    if settings.default_skill not in skill_ids:
        known = ", ".join(skill_ids) or "none"
        raise ConfigError(
            f"{locate(settings, 'default_skill')}: "
            f"default_skill '{settings.default_skill}' is not among the configured skills "
            f"(known: {known}); name one of them, or leave default_skill out to use the first"
        )
    return settings


def _validate(
    model: type[M],
    data: dict[str, Any],
    *,
    source: str,
    root: yaml.Node | None,
    origins: Mapping[str, str],
) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message = describe_validation_error(
            exc, source=source, model=model, root=root, origins=origins
        )
        raise ConfigError(message) from None


def _set_dotted(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[leaf] = value


def _env_overrides(env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """`HUB_SECTION__KEY=value` becomes `section.key`; a few short names are kept for ease.

    Returns:
        The overrides by dotted key, and the variable each came from.
    """
    short = {
        "HUB_HOST": "server.host",
        "HUB_PORT": "server.port",
        "HUB_PUBLIC_URL": "server.public_url",
        "HUB_LOG_LEVEL": "server.log_level",
        "HUB_STORE": "store.path",
        "HUB_STORE_KIND": "store.kind",
        "HUB_AGENTS": "agents",
    }
    overrides: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for name, value in env.items():
        if name in short:
            dotted = short[name]
        elif name.startswith("HUB_") and "__" in name:
            dotted = name[4:].lower().replace("__", ".")
        else:
            continue
        overrides[dotted] = value
        origins[dotted] = f"environment variable {name}"
    return overrides, origins


def load_settings(
    path: str | Path | None = None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from `path` (default `config/hub.yaml`, or `$HUB_CONFIG`), env and flags.

    A missing default file gives the embedded defaults; a missing named file is an error.

    Raises:
        ConfigError: the file or an override is wrong; the message names file, line and key.
    """
    env = os.environ if env is None else env
    from_env, origins = _env_overrides(env)
    combined = {**from_env, **(overrides or {})}
    origins.update({dotted: f"the override of {dotted}" for dotted in overrides or {}})
    if path is None:
        path = env.get("HUB_CONFIG")
    if path is None and not Path("config/hub.yaml").exists():
        data: dict[str, Any] = {}
        for dotted, value in combined.items():
            _set_dotted(data, dotted, value)
        return _validate(Settings, data, source="settings", root=None, origins=origins)
    source = Path(path or "config/hub.yaml")
    settings = load_yaml_model(
        source,
        Settings,
        env=env,
        overrides=combined,
        origins=origins,
        check_raw=partial(_check_secrets_as_written, source=str(source), env=env),
    )
    _SOURCES[id(settings)] = str(source)
    weakref.finalize(settings, _SOURCES.pop, id(settings), None)
    return settings


_SOURCES: dict[int, str] = {}
"""The file each loaded Settings object was read from (by id, forgotten with the object):
kept beside the model, not in it, so settings of equal values stay equal."""


def locate(settings: Settings, *loc: int | str) -> str:
    """`file:line` of the key at `loc` (`"skills", 2`) in the file the settings were read
    from, the file alone if the key is not written there, or "settings" for settings made in
    code. For errors found after loading, so they point where the fix goes."""
    source = _SOURCES.get(id(settings))
    if source is None:
        return "settings"
    try:
        root = yaml.compose(Path(source).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return source
    line = _line_of(root, loc)
    return f"{source}:{line}" if line else source


_SECRET_KEYS = (("api_key", "KEY"), ("bearer", "TOKEN"))


def _written_secrets(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """Every secret of the document as written: its place, its value and the variable name
    to suggest for it (credentials' keys and tokens, models' API keys)."""
    auth = data.get("auth")
    credentials = auth.get("credentials") if isinstance(auth, dict) else None
    for index, credential in enumerate(credentials if isinstance(credentials, list) else []):
        if not isinstance(credential, dict):
            continue
        name = credential.get("name")
        prefix = _variable_part(name) if isinstance(name, str) else ""
        for key, suffix in _SECRET_KEYS:
            if credential.get(key) is not None:
                suggestion = f"HUB_{prefix or 'CALLER'}_{suffix}"
                yield ("auth", "credentials", index, key), credential[key], suggestion
    models = data.get("models")
    for name, model in models.items() if isinstance(models, dict) else []:
        if isinstance(model, dict) and model.get("api_key") is not None:
            provider = model.get("provider")
            suggestion = (
                f"{_variable_part(provider)}_API_KEY"
                if isinstance(provider, str) and provider
                else f"HUB_MODEL_{_variable_part(str(name))}_KEY"
            )
            yield ("models", name, "api_key"), model["api_key"], suggestion


def _variable_part(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", text.upper()).strip("_")


def _check_secrets_as_written(
    data: dict[str, Any], root: yaml.Node | None, *, source: str, env: Mapping[str, str]
) -> None:
    """Secrets (credentials' keys and tokens, models' API keys) must be written as `${NAME}`
    references (a literal one ends up in version control), to variables that are set.
    Messages name the file, line and key, never the value."""
    problems: list[InitErrorDetails] = []
    for loc, value, suggestion in _written_secrets(data):
        match = ENV_REF.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            message = (
                f'write the secret as an environment reference such as "${{{suggestion}}}", '
                "not literally"
            )
            problems.append(
                {"type": PydanticCustomError("secret_literal", message), "loc": loc, "input": None}
            )
        elif match.group(1) not in env:
            message = f"environment variable {match.group(1)} is not set"
            problems.append(
                {"type": PydanticCustomError("env_missing", message), "loc": loc, "input": None}
            )
    if problems:
        error = ValidationError.from_exception_data(Settings.__name__, problems)
        raise ConfigError(
            describe_validation_error(error, source=source, model=Settings, root=root)
        )
