"""TLS to a partner: a private CA made in the test, and a partner (the a2a-sdk over uvicorn)
that requires a client certificate; the hub reaches it with its entry's `tls` files, and
without the client certificate it is refused at the handshake, the reason said."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from hub.client import user_message
from hub.errors import CardFetchError, CardRefusedError, ConfigError
from hub.partners import Partners
from hub.protocol import Task, TaskState
from hub.registry import load_registry
from hub.testing import serve_on_loopback
from hub.trust import PartnerTls
from tests.client.partners import sdk_jsonrpc
from tests.trust.pki import PrivatePki, private_pki

pytestmark = pytest.mark.anyio


@pytest.fixture
def pki(tmp_path: Path) -> PrivatePki:
    return private_pki(tmp_path)


@pytest.fixture
async def mtls_partner(pki: PrivatePki) -> AsyncIterator[str]:
    """The SDK partner over HTTPS, with the CA's certificate, asking for a client's."""
    async with serve_on_loopback(sdk_jsonrpc, tls=pki.server(require_client=True)) as url:
        yield url


def partners_of(tmp_path: Path, url: str, tls: dict[str, str] | None) -> Partners:
    entry: dict[str, object] = {"name": "secure", "url": url}
    if tls is not None:
        entry["tls"] = tls
    path = tmp_path / "agents.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "agents": [entry]}))
    return Partners(load_registry(path))


async def test_a_partner_that_requires_a_client_certificate_is_called_with_the_entrys_files(
    tmp_path: Path, pki: PrivatePki, mtls_partner: str
) -> None:
    tls = {
        "ca_file": str(pki.ca_file),
        "cert_file": str(pki.client_cert),
        "key_file": str(pki.client_key),
    }
    async with partners_of(tmp_path, mtls_partner, tls) as partners:
        health = await partners.check("secure")
        assert health.ok, health.error
        client = await partners.client("secure")
        answer = await client.send(user_message("over mutual TLS"))
        assert isinstance(answer, Task)
        assert answer.status.state is TaskState.COMPLETED
        assert answer.artifacts is not None
        assert answer.artifacts[0].parts[0].text == "over mutual TLS"


async def test_without_the_client_certificate_the_partner_refuses_the_handshake(
    tmp_path: Path, pki: PrivatePki, mtls_partner: str
) -> None:
    async with partners_of(tmp_path, mtls_partner, {"ca_file": str(pki.ca_file)}) as partners:
        health = await partners.check("secure")
        assert not health.ok
        assert health.error is not None
        assert "its agent card could not be read (unreachable)" in health.error
        # TLS 1.3: the server checks the client's certificate after the handshake, and
        # closes the connection on the hub.
        assert "Server disconnected" in health.error
        assert partners.card_error("secure") is not None


async def test_without_the_private_ca_the_partners_certificate_is_not_trusted(
    tmp_path: Path, mtls_partner: str
) -> None:
    async with partners_of(tmp_path, mtls_partner, None) as partners:
        with pytest.raises(CardFetchError) as caught:
            await partners.card("secure")
        assert "TLS handshake failed: certificate verify failed" in (caught.value.detail or "")


async def test_a_partner_with_a_ca_only_entry_is_reached_over_plain_server_tls(
    tmp_path: Path, pki: PrivatePki
) -> None:
    async with (
        serve_on_loopback(sdk_jsonrpc, tls=pki.server(require_client=False)) as url,
        partners_of(tmp_path, url, {"ca_file": str(pki.ca_file)}) as partners,
    ):
        card = await partners.card("secure")
        assert card.supported_interfaces[0].url.startswith("https://127.0.0.1:")


def test_tls_files_that_are_missing_or_half_a_pair_are_refused_when_agents_yaml_is_read(
    tmp_path: Path, pki: PrivatePki
) -> None:
    for tls, expected in [
        ({"ca_file": str(tmp_path / "absent.pem")}, "ca_file"),
        ({"cert_file": str(pki.client_cert)}, "cert_file and key_file go together"),
        ({}, "tls needs ca_file"),
    ]:
        with pytest.raises(ConfigError, match=expected):
            partners_of(tmp_path, "https://127.0.0.1:1", tls)


async def test_tls_files_that_are_not_pem_refuse_the_card_naming_the_file_not_its_content(
    tmp_path: Path, pki: PrivatePki
) -> None:
    secret_key = pki.client_key.read_text()
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("this is no certificate\n")
    tls = {"ca_file": str(pki.ca_file), "cert_file": str(not_pem), "key_file": str(pki.client_key)}
    async with partners_of(tmp_path, "https://127.0.0.1:1", tls) as partners:
        with pytest.raises(CardRefusedError) as caught:
            await partners.card("secure")
        message = str(caught.value)
        assert "agent 'secure': tls.cert_file" in message
        assert str(not_pem) in message
        assert secret_key.strip().splitlines()[1] not in message
        assert partners.card_error("secure") == message


def test_the_pem_bytes_for_a_grpc_channel_are_the_files_and_their_repr_hides_them(
    pki: PrivatePki,
) -> None:
    tls = PartnerTls(ca_file=pki.ca_file, cert_file=pki.client_cert, key_file=pki.client_key)
    pem = tls.pem()
    assert pem.ca == pki.ca_file.read_bytes()
    assert pem.key == pki.client_key.read_bytes()
    assert repr(pem) == str(pem) == "TlsPem(ca, cert, key)"
