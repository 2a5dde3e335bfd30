"""The gRPC door's settings and start-up: refused without the extra with the pip command,
its TLS files read at start-up, the card's interface, and the door stopped with the app."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from hub.app import create_app
from hub.config import GrpcSettings, GrpcTlsSettings, ServerSettings, Settings, StoreSettings
from hub.errors import ConfigError
from hub.protocol.grpc import a2a_pb2, a2a_pb2_grpc
from hub.protocol.grpc.extra import grpc_installed
from hub.server.card import build_card
from hub.skills.echo import echo
from hub.store import MemoryTaskStore
from hub.testing import serve_hub
from tests.certificates import self_signed

V1 = (("a2a-version", "1.0"),)

pytestmark = pytest.mark.anyio


def settings(**grpc: object) -> Settings:
    return Settings(
        server=ServerSettings(grpc=GrpcSettings.model_validate({"enabled": True, **grpc})),
        store=StoreSettings(kind="memory"),
    )


def test_the_door_without_the_extra_stops_start_up_with_the_pip_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)  # as if grpcio were not installed
    grpc_installed.cache_clear()
    try:
        with pytest.raises(ConfigError) as refused:
            create_app(settings(), store=MemoryTaskStore(), skills={"echo": echo})
    finally:
        grpc_installed.cache_clear()

    assert str(refused.value).endswith(
        "the `grpc` extra is not installed: pip install 'a2a-hub[grpc]' "
        "(or set server.grpc.enabled: false)"
    )


def test_a_hub_without_the_door_needs_no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "grpc", None)
    plain = Settings(store=StoreSettings(kind="memory"))
    create_app(plain, store=MemoryTaskStore(), skills={"echo": echo})
    assert all(i.protocol_binding != "GRPC" for i in build_card(plain, []).supported_interfaces)


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ({"public_url": "https://hub.example.com"}, "hub.example.com:50051"),
        ({"host": "0.0.0.0", "grpc": {"enabled": True, "port": 7000}}, "0.0.0.0:7000"),
        (
            {"grpc": {"enabled": True, "public_address": "a2a.example.com:443"}},
            "a2a.example.com:443",
        ),
        ({"host": "::1"}, "[::1]:50051"),
    ],
)
def test_the_card_names_the_door_as_host_and_port(server: dict[str, object], expected: str) -> None:
    served = ServerSettings.model_validate({"grpc": {"enabled": True}, **server})
    card = build_card(Settings(server=served), [echo.card])
    grpc_interfaces = [i for i in card.supported_interfaces if i.protocol_binding == "GRPC"]
    assert [(i.url, i.protocol_version, i.tenant) for i in grpc_interfaces] == [
        (expected, "1.0", None)
    ]


def test_an_unreadable_tls_file_stops_start_up_naming_the_setting(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("a certificate")
    tls = GrpcTlsSettings(cert_file=str(tmp_path / "cert.pem"), key_file=str(tmp_path / "k"))
    with pytest.raises(ConfigError, match=r"server\.grpc\.tls\.key_file: cannot read .*k \("):
        create_app(settings(tls=tls), store=MemoryTaskStore(), skills={"echo": echo})


async def test_the_door_stops_with_the_app() -> None:
    import grpc

    async with serve_hub(settings=settings()) as hub:
        address = str(hub.grpc_address)
        async with grpc.aio.insecure_channel(address) as channel:
            with anyio.fail_after(10):
                await channel.channel_ready()
    async with grpc.aio.insecure_channel(address) as channel:
        # Nothing listens any more: the channel fails to connect (it never becomes ready).
        with anyio.move_on_after(0.5):
            await channel.channel_ready()
        assert channel.get_state() != grpc.ChannelConnectivity.READY


async def test_over_tls_a_client_that_trusts_the_certificate_is_served(tmp_path: Path) -> None:
    import grpc

    cert_file, key_file = self_signed(tmp_path)
    tls = GrpcTlsSettings(cert_file=str(cert_file), key_file=str(key_file))
    async with serve_hub(settings=settings(tls=tls)) as hub:
        address = str(hub.grpc_address)
        trusted = grpc.ssl_channel_credentials(root_certificates=cert_file.read_bytes())
        async with grpc.aio.secure_channel(address, trusted) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            listed = await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=V1, timeout=10)
        async with grpc.aio.insecure_channel(address) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as plaintext:
                await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=V1, timeout=5)
    assert listed.total_size == 0
    assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_mutual_tls_refuses_a_client_without_a_certificate(tmp_path: Path) -> None:
    import grpc

    cert_file, key_file = self_signed(tmp_path)
    client_cert, client_key = self_signed(tmp_path, "client")
    tls = GrpcTlsSettings(
        cert_file=str(cert_file), key_file=str(key_file), client_ca_file=str(client_cert)
    )
    root = cert_file.read_bytes()
    async with serve_hub(settings=settings(tls=tls)) as hub:
        address = str(hub.grpc_address)
        anonymous = grpc.ssl_channel_credentials(root_certificates=root)
        async with grpc.aio.secure_channel(address, anonymous) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=V1, timeout=5)
        known = grpc.ssl_channel_credentials(
            root_certificates=root,
            private_key=client_key.read_bytes(),
            certificate_chain=client_cert.read_bytes(),
        )
        async with grpc.aio.secure_channel(address, known) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            listed = await stub.ListTasks(a2a_pb2.ListTasksRequest(), metadata=V1, timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert listed.total_size == 0
