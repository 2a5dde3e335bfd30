"""The generated A2A 1.0 gRPC messages: importable beside a2a-sdk's own, read and written in
the proto3 JSON form, and never imported by a plain `import hub`."""

from __future__ import annotations

import subprocess
import sys

from google.protobuf import json_format  # type: ignore[import-untyped]

from hub.protocol.task import Task


def test_the_messages_live_beside_a2a_sdk_s_own() -> None:
    import a2a.types.a2a_pb2 as sdk

    from hub.protocol.grpc import a2a_pb2, a2a_pb2_grpc

    assert a2a_pb2.Task is not sdk.Task
    assert a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].full_name == "lf.a2a.v1.A2AService"
    assert a2a_pb2_grpc.A2AServiceStub is not None


def test_a_task_reads_in_the_proto3_json_form() -> None:
    from hub.protocol.grpc import a2a_pb2

    task = Task.model_validate(
        {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}
    )
    message = json_format.ParseDict(task.to_wire(), a2a_pb2.Task())
    assert message.status.state == a2a_pb2.TASK_STATE_WORKING
    assert Task.model_validate(json_format.MessageToDict(message)) == task


def test_a_plain_import_of_hub_loads_no_grpc() -> None:
    code = (
        "import sys, hub; "
        "print(any(m.startswith(('grpc', 'google.protobuf')) for m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"
