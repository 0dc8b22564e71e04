"""Generated protobuf messages of the Pravega controller API, the project's one copy.

``controller.proto`` declares the subset of Pravega's controller API (Pravega's own package
``io.pravega.controller.stream.api.grpc.v1``, message and field numbers) that the connector's
controller client calls and the test emulator serves; both import ``controller_pb2`` from here.
gRPC method paths are built from the service name by the callers, so no ``_pb2_grpc`` module is
generated. Regenerate ``controller_pb2.py`` with ``python -m connectors.pravega._proto.regenerate``
(see that module).
"""
