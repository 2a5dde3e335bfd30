"""A2A 1.0 over gRPC: the proto (a2a.proto, copied from the A2A project) and the messages and
stubs generated from it (`make grpc-stubs`, scripts/grpc_stubs.py). Needs the `grpc` extra;
nothing imports this package unless gRPC is used.
"""
