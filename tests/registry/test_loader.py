"""Loading agents.yaml: every kind of mistake names file, line and key; good files load."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from hub.errors import ConfigError
from hub.protocol.grpc.extra import grpc_installed
from hub.registry import Registry, load_registry

ENV = {"RESEARCH_TOKEN": "tok-research-0001", "KEY": "key-0002", "V": "custom-0003"}

FULL_EXAMPLE = """\
version: 1
agents:
  - name: research
    url: https://research.example.com
    auth: {bearer: "${RESEARCH_TOKEN}"}
    timeout: {connect: 5, read: 120}
    tags: [research, summarise]
    weight: 1.0
    protocol: {version: auto, binding: auto}
    enabled: true
  - name: legacy-translator
    url: http://translator.internal:9000
    protocol: {version: "0.3", binding: jsonrpc}
  - name: keyed
    url: https://keyed.example.com/card.json
    auth: {api_key: "${KEY}", header: X-Api-Token, headers: {X-Custom: "${V}"}}
    timeout: {connect: 2s, read: null, deadline: 2m}
    weight: 2.5
  - name: pinned
    card:
      name: Pinned
      description: An agent whose card is written here
      version: "1.0.0"
      supportedInterfaces:
        - url: https://pinned.example.com/a2a
          protocolBinding: JSONRPC
          protocolVersion: "1.0"
      capabilities: {streaming: true}
      defaultInputModes: [text/plain]
      defaultOutputModes: [text/plain]
      skills: []
  - name: old
    url: https://old.example.com
    enabled: false
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_registry(path, env=ENV if env is None else env)
    return str(caught.value)


def entry_with(lines: str) -> str:
    """A file with one agent whose keys after `name` are `lines` (indented 4)."""
    return "version: 1\nagents:\n  - name: research\n" + lines


# --- mistakes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fragments"),
    [
        pytest.param(
            entry_with("    urll: https://x.example.com\n"),
            4,
            ["'agents.0.urll'", "did you mean 'url'?"],
            id="typo-in-a-key",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    auth: {baerer: '${KEY}'}\n"),
            5,
            ["'agents.0.auth.baerer'", "did you mean 'bearer'?"],
            id="typo-in-a-nested-key",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    timeout: {conect: 5}\n"),
            5,
            ["'agents.0.timeout.conect'", "did you mean 'connect'?"],
            id="typo-in-a-timeout-key",
        ),
        pytest.param(
            "version: 1\nagent: []\n", 2, ["'agent'", "did you mean 'agents'?"], id="typo-at-top"
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    weight: heavy\n"),
            5,
            ["agents.0.weight", "valid number"],
            id="weight-not-a-number",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    weight: 0\n"),
            5,
            ["agents.0.weight", "greater than 0"],
            id="weight-zero",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    tags: research\n"),
            5,
            ["agents.0.tags", "write [research]"],
            id="tags-not-a-list",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    timeout: {read: soon}\n"),
            5,
            ["agents.0.timeout.read", "'soon' is not a duration"],
            id="bad-duration",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    timeout: {connect: 0}\n"),
            5,
            ["agents.0.timeout.connect", "greater than zero"],
            id="zero-timeout",
        ),
        pytest.param(
            "agents:\n  - name: research\n    url: https://x.example.com\n",
            1,
            ["version", "start the file with 'version: 1'"],
            id="missing-version",
        ),
        pytest.param(
            "version: 2\nagents: []\n",
            1,
            ["version", "version 2 is not known; the known version is 1"],
            id="wrong-version",
        ),
        pytest.param(
            "version: 1\nagents:\n  - name: Research Bot\n    url: https://x.example.com\n",
            3,
            ["agents.0.name", "'Research Bot' is not a valid agent name", "lowercase letters"],
            id="bad-name",
        ),
        pytest.param(
            entry_with("    url: ftp://x.example.com\n"),
            4,
            ["agents.0.url", "http:// or https://", "'ftp'"],
            id="bad-url-scheme",
        ),
        pytest.param(
            entry_with("    url: research.example.com\n"),
            4,
            ["agents.0.url", "http:// or https://"],
            id="url-without-scheme",
        ),
        pytest.param(
            entry_with("    url: http:///path\n"), 4, ["agents.0.url", "no host"], id="no-host"
        ),
        pytest.param(
            entry_with("    tags: [x]\n"),
            3,
            ["agents.0:", "needs a 'url', an inline 'card', or both"],
            id="neither-url-nor-card",
        ),
        pytest.param(
            entry_with(
                "    url: https://x.example.com\n"
                "    auth:\n      bearer: '${RESEARCH_TOKEN}'\n      api_key: '${KEY}'\n"
            ),
            5,
            [
                "agents.0.auth",
                "use one of 'bearer', 'api_key' and 'oauth2', not bearer and api_key",
            ],
            id="bearer-and-api-key",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    auth: {header: X-Key}\n"),
            5,
            ["agents.0.auth", "set 'api_key' too"],
            id="header-without-api-key",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    auth: {headers: {'X Bad': '${V}'}}\n"),
            5,
            ["agents.0.auth.headers", "'X Bad' is not a valid header name"],
            id="bad-header-name",
        ),
        pytest.param(
            entry_with(
                "    url: https://x.example.com\n"
                "    auth: {bearer: '${RESEARCH_TOKEN}', headers: {authorization: '${V}'}}\n"
            ),
            5,
            ["agents.0.auth", "'authorization' is set twice"],
            id="header-set-twice",
        ),
        pytest.param(
            entry_with(
                "    card:\n      name: Research\n      supportedInterfaces: []\n"
                "      description: finds things\n"
            ),
            4,
            ["agents.0.card", "not a valid 1.0 agent card", "version: Field required"],
            id="bad-inline-card",
        ),
        pytest.param(
            entry_with("    card: {name: Research}\n"),
            4,
            ["agents.0.card", "not a valid 0.3 agent card", "url: Field required"],
            id="bad-inline-0.3-card",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    protocol: {version: 2.0}\n"),
            5,
            ["agents.0.protocol.version", "'auto', '1.0' or '0.3'"],
            id="bad-protocol-version",
        ),
        pytest.param(
            entry_with("    url: https://x.example.com\n    protocol: {binding: soap}\n"),
            5,
            ["agents.0.protocol.binding", "'auto', 'jsonrpc', 'http+json' or 'grpc'"],
            id="bad-binding",
        ),
        pytest.param(
            "version: 1\nagents:\n  - name: a\n   url: x\n", 4, ["not valid YAML"], id="bad-yaml"
        ),
    ],
)
def test_a_mistake_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, fragments: list[str]
) -> None:
    path = write(tmp_path, text)
    message = load_error(path)
    assert message.startswith(f"{path}:{line}:")
    for fragment in fragments:
        assert fragment in message


def test_a_duplicate_name_is_reported_on_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\nagents:\n"
        "  - name: research\n    url: https://a.example.com\n"
        "  - name: translate\n    url: https://b.example.com\n"
        "  - name: research\n    url: https://c.example.com\n",
    )
    first, second = load_error(path).splitlines()
    assert first.startswith(f"{path}:3: agents.0.name:")
    assert "also used by agents.2" in first
    assert second.startswith(f"{path}:7: agents.2.name:")
    assert "also used by agents.0" in second


@pytest.mark.parametrize(
    ("auth", "suggestion"),
    [
        pytest.param("{bearer: sk-live-4f9a2c}", "${RESEARCH_TOKEN}", id="bearer"),
        pytest.param("{api_key: sk-live-4f9a2c}", "${RESEARCH_API_KEY}", id="api-key"),
        pytest.param("{headers: {X-Custom: sk-live-4f9a2c}}", "${RESEARCH_X_CUSTOM}", id="header"),
        pytest.param("{bearer: 'Bearer ${RESEARCH_TOKEN}'}", "${RESEARCH_TOKEN}", id="mixed-text"),
    ],
)
def test_a_literal_secret_is_refused_without_being_repeated(
    tmp_path: Path, auth: str, suggestion: str
) -> None:
    path = write(tmp_path, entry_with(f"    url: https://x.example.com\n    auth: {auth}\n"))
    message = load_error(path)
    assert message.startswith(f"{path}:5: agents.0.auth.")
    assert f'environment reference such as "{suggestion}", not literally' in message
    assert "sk-live-4f9a2c" not in message


def test_an_unset_secret_variable_names_the_variable_and_the_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, entry_with("    url: https://x.example.com\n    auth: {bearer: '${NOPE}'}\n")
    )
    message = load_error(path, env={})
    assert message == f"{path}:5: agents.0.auth.bearer: environment variable NOPE is not set"


def test_an_unset_variable_elsewhere_names_the_variable(tmp_path: Path) -> None:
    path = write(tmp_path, entry_with("    url: '${RESEARCH_URL}'\n"))
    message = load_error(path, env={})
    assert message.startswith(f"{path}:")
    assert "RESEARCH_URL is not set" in message


def test_an_empty_secret_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, entry_with("    url: https://x.example.com\n    auth: {bearer: '${EMPTY}'}\n")
    )
    assert "the secret is empty" in load_error(path, env={"EMPTY": ""})


def test_a_secret_with_a_line_break_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path, entry_with("    url: https://x.example.com\n    auth: {bearer: '${TOKEN}'}\n")
    )
    message = load_error(path, env={"TOKEN": "abc\r\nX-Injected: 1"})
    assert "line break" in message
    assert "X-Injected" not in message


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_bytes(b"version: 1\nagents:\n  - name: caf\xe9\n")
    assert load_error(path) == f"{path}:3: not UTF-8 text"


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "agents: []\n"])
def test_a_file_without_version_is_refused(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    assert "start the file with 'version: 1'" in load_error(path)


def test_a_missing_file_is_an_error_unless_missing_ok(tmp_path: Path) -> None:
    missing = tmp_path / "agents.yaml"
    assert load_error(missing).startswith(f"{missing}: cannot read the file")
    registry = load_registry(missing, env={}, missing_ok=True)
    assert len(registry) == 0
    assert registry.source == missing


# --- good files --------------------------------------------------------------------------------


def test_the_full_example_loads(tmp_path: Path) -> None:
    registry = load_registry(write(tmp_path, FULL_EXAMPLE), env=ENV)
    assert registry.names() == ("research", "legacy-translator", "keyed", "pinned")
    assert [entry.name for entry in registry.all()][-1] == "old"
    research = registry["research"]
    assert research.url == "https://research.example.com"
    assert research.tags == ("research", "summarise")
    assert (research.timeout.connect, research.timeout.read) == (5.0, 120.0)
    assert research.card_url == "https://research.example.com/.well-known/agent-card.json"
    legacy = registry["legacy-translator"]
    assert (legacy.protocol.version, legacy.protocol.binding) == ("0.3", "jsonrpc")
    keyed = registry["keyed"]
    assert (keyed.timeout.connect, keyed.timeout.read, keyed.timeout.deadline) == (2, None, 120)
    assert keyed.weight == 2.5
    pinned = registry["pinned"]
    assert pinned.url is None
    assert pinned.card is not None
    assert pinned.card.supported_interfaces[0].url == "https://pinned.example.com/a2a"


def test_environment_references_are_expanded_into_headers(tmp_path: Path) -> None:
    registry = load_registry(write(tmp_path, FULL_EXAMPLE), env=ENV)
    assert registry["research"].auth.http_headers() == {"Authorization": "Bearer tok-research-0001"}
    assert registry["keyed"].auth.http_headers() == {
        "X-Api-Token": "key-0002",
        "X-Custom": "custom-0003",
    }
    assert registry["pinned"].auth.http_headers() == {}


def test_no_secret_shows_in_repr_or_str(tmp_path: Path) -> None:
    registry = load_registry(write(tmp_path, FULL_EXAMPLE), env=ENV)
    shown = [repr(registry), str(registry)]
    for entry in registry.all():
        shown += [repr(entry), str(entry), repr(entry.auth), str(entry.auth)]
        shown.append(entry.model_dump_json())
    for text in shown:
        for secret in ENV.values():
            assert secret not in text


def test_an_unquoted_protocol_version_is_read_as_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\nagents:\n"
        "  - {name: a, url: 'https://a.example.com', protocol: {version: 0.3}}\n"
        "  - {name: b, url: 'https://b.example.com', protocol: {version: 1.0}}\n",
    )
    registry = load_registry(path, env={})
    assert [entry.protocol.version for entry in registry] == ["0.3", "1.0"]


def test_an_inline_0_3_card_is_upgraded(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        entry_with(
            "    card:\n"
            "      name: Research\n      description: finds things\n      version: '1'\n"
            "      protocolVersion: '0.3.0'\n      url: https://research.example.com/rpc\n"
            "      preferredTransport: JSONRPC\n      capabilities: {}\n"
            "      defaultInputModes: [text/plain]\n      defaultOutputModes: [text/plain]\n"
            "      skills: []\n"
        ),
    )
    card = load_registry(path, env={})["research"].card
    assert card is not None
    interface = card.supported_interfaces[0]
    assert (interface.url, interface.protocol_version) == (
        "https://research.example.com/rpc",
        "0.3",
    )


@pytest.mark.parametrize("agents", ["", "agents:\n", "agents: []\n"])
def test_a_file_with_version_and_no_agents_is_an_empty_registry(
    tmp_path: Path, agents: str
) -> None:
    registry = load_registry(write(tmp_path, "version: 1\n" + agents), env={})
    assert isinstance(registry, Registry)
    assert list(registry) == []
    assert registry.all() == ()


# --- docs/agents-yaml.md -----------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents-yaml.md"


def test_the_error_examples_in_the_docs_are_what_the_loader_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = DOC.read_text(encoding="utf-8").split("## Errors", 1)[1]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.DOTALL)
    pairs = list(zip(blocks[::2], blocks[1::2], strict=True))
    assert len(pairs) == 2
    monkeypatch.chdir(tmp_path)
    for (kind, text), (_, printed) in pairs:
        assert kind == "yaml"
        Path("agents.yaml").write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_registry("agents.yaml", env={"RESEARCH_TOKEN": "tok"})
        assert str(caught.value) == printed.strip()


def test_binding_grpc_without_the_grpc_extra_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(
        tmp_path, entry_with("    url: https://x.example.com\n    protocol: {binding: grpc}\n")
    )
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "grpc", None)  # as if never installed
        grpc_installed.cache_clear()
        message = load_error(path)
    grpc_installed.cache_clear()

    assert message.startswith(f"{path}:5:")
    assert "binding grpc needs the grpc extra: pip install 'a2a-hub[grpc]'" in message
    assert load_registry(path, env=ENV).get("research") is not None
