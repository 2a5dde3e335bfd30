"""The descriptor pool the A2A 1.0 gRPC messages are built in.

a2a-sdk registers the same `a2a.proto` in protobuf's default pool; two registrations of one
file collide there. The hub's messages live in a pool of their own, which holds the files
`a2a.proto` imports (google/protobuf's and google/api's), added dependencies first.
"""

from __future__ import annotations

from google.api import annotations_pb2, client_pb2, field_behavior_pb2  # type: ignore[import-untyped]
from google.protobuf import (  # type: ignore[import-untyped]
    descriptor,
    descriptor_pool,
    empty_pb2,
    struct_pb2,
    timestamp_pb2,
)

__all__ = ["POOL"]

POOL = descriptor_pool.DescriptorPool()

_added: set[str] = set()


def _add(file: descriptor.FileDescriptor) -> None:
    if file.name in _added:
        return
    for dependency in file.dependencies:
        _add(dependency)
    POOL.AddSerializedFile(file.serialized_pb)
    _added.add(file.name)


for _module in (
    annotations_pb2,
    client_pb2,
    field_behavior_pb2,
    empty_pb2,
    struct_pb2,
    timestamp_pb2,
):
    _add(_module.DESCRIPTOR)
