"""Imported first by the package: the emulator's gRPC server comes with the ``pravega`` extra."""

from connectors._extras import require_extra

require_extra("the Pravega emulator", "pravega", ("grpc", "google.protobuf"))
