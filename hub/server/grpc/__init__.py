"""The gRPC door: A2A 1.0's `lf.a2a.v1.A2AService` served by grpcio's asyncio server, one
more client of `A2AOperations` (docs/grpc.md). Needs the `grpc` extra; imported only by the
app's lifespan when `server.grpc.enabled` (`hub/server/grpc_door.py`).
"""
