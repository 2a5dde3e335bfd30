"""The A2A 1.0 gRPC stubs of hub/protocol/grpc, generated anew from the proto beside them.

    make grpc-stubs        # installs grpcio-tools (a generation tool only), then runs this

protoc (grpcio-tools) writes a2a_pb2.py, a2a_pb2.pyi and a2a_pb2_grpc.py; two lines are then
rewritten: the stub module imports the messages from the package, and the messages are built
into the hub's own descriptor pool (hub/protocol/grpc/descriptors.py) rather than protobuf's
default one, where a2a-sdk registers the same `a2a.proto` and the two would collide.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

from grpc_tools import protoc

HERE = Path(__file__).resolve().parents[1] / "hub" / "protocol" / "grpc"


def main() -> int:
    site = sysconfig.get_paths()["purelib"]
    done = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{HERE}",
            f"-I{site}",
            f"-I{Path(protoc.__file__).parent / '_proto'}",
            f"--python_out={HERE}",
            f"--pyi_out={HERE}",
            f"--grpc_python_out={HERE}",
            str(HERE / "a2a.proto"),
        ]
    )
    if done != 0:
        return done
    messages = HERE / "a2a_pb2.py"
    messages.write_text(
        messages.read_text().replace(
            "_descriptor_pool.Default()",
            "__import__('hub.protocol.grpc.descriptors', fromlist=['POOL']).POOL",
        )
    )
    stubs = HERE / "a2a_pb2_grpc.py"
    stubs.write_text(
        stubs.read_text().replace(
            "import a2a_pb2 as a2a__pb2", "from hub.protocol.grpc import a2a_pb2 as a2a__pb2"
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
