"""The gRPC messages convert to the hub's models and back, with proto3's dropped defaults and
Struct's doubles mended, and a value that does not fit refused in words."""

from __future__ import annotations

import pytest

pytest.importorskip("grpc")

from hub.protocol import (
    GetTaskRequest,
    ListTasksResponse,
    SendMessageRequest,
)
from hub.protocol.grpc import a2a_pb2
from hub.protocol.grpc.convert import ConversionError, from_proto, to_proto


def test_a_request_with_every_kind_of_part_comes_back_equal() -> None:
    request = SendMessageRequest.model_validate(
        {
            "message": {
                "messageId": "m1",
                "role": "ROLE_USER",
                "parts": [{"text": "hello"}, {"raw": "YQ=="}, {"data": {"a": 1, "b": [1.5, 2]}}],
                "metadata": {"n": 1, "x": [1, 2.5, "a"]},
            },
            "configuration": {"historyLength": 0},
        }
    )
    back = from_proto(to_proto(request, a2a_pb2.SendMessageRequest), SendMessageRequest)
    assert back == request
    assert back.message.metadata == {"n": 1, "x": [1, 2.5, "a"]}
    assert isinstance(back.message.metadata["n"], int)


def test_required_zeros_proto3_drops_are_read_back() -> None:
    page = ListTasksResponse(tasks=[], next_page_token="", page_size=0, total_size=0)
    proto = to_proto(page, a2a_pb2.ListTasksResponse)
    assert proto.ByteSize() == 0
    assert from_proto(proto, ListTasksResponse) == page


def test_a_message_the_models_refuse_says_what_is_wrong() -> None:
    proto = a2a_pb2.SendMessageRequest(message=a2a_pb2.Message(message_id="x"))
    with pytest.raises(ConversionError, match=r"message\.parts"):
        from_proto(proto, SendMessageRequest)


def test_a_value_beyond_the_proto_s_range_is_refused() -> None:
    with pytest.raises(ConversionError, match="historyLength"):
        to_proto(GetTaskRequest(id="t", history_length=2**40), a2a_pb2.GetTaskRequest)


def test_a_card_is_written_as_protobuf_reads_its_json() -> None:
    from google.protobuf import json_format

    from hub.config import AuthSettings, CredentialSettings, Settings
    from hub.server.card import build_card
    from hub.skills.echo import echo

    settings = Settings(
        auth=AuthSettings(
            enabled=True,
            credentials=(
                CredentialSettings(name="a", api_key="key-1234567890abcdef"),
                CredentialSettings(name="b", bearer="token-1234567890abcdef"),
            ),
        ),
        card={"extensions": [{"uri": "urn:x", "params": {"n": 1, "l": [{}, []]}}]},
    )
    card = build_card(settings, [echo.card])
    written = to_proto(card, a2a_pb2.AgentCard)
    read = json_format.Parse(card.to_json(), a2a_pb2.AgentCard())
    assert written.SerializeToString(deterministic=True) == read.SerializeToString(
        deterministic=True
    )
