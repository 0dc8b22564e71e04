"""Generated protobuf messages of the Pravega controller API (a private copy for the connector).

``controller.proto`` is the emulator's proto with the package renamed to
``sparkflow.pravega.controller.v1`` so both can live in one process without clashing in the
protobuf descriptor pool. Message field numbers are Pravega's; gRPC method paths are built by the
connector's controller client with Pravega's real service name. Regenerate with::

    python -m grpc_tools.protoc -I. --python_out=. connectors/pravega/_proto/controller.proto

then remove the ``runtime_version`` check (see the emulator's ``proto/regenerate.py``).
"""
