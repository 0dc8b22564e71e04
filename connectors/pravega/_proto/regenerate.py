"""Regenerate ``controller_pb2.py`` from ``controller.proto``: the one recipe, run after editing the proto.

Run from the repository root with the test extras installed (grpcio-tools)::

    python -m connectors.pravega._proto.regenerate

The generated module is committed so that the connector needs only ``protobuf`` at run time. Recent
``protoc`` releases stamp the generated code with a check that refuses older runtimes (``protobuf``
before the generator's version); the project supports ``protobuf>=4.25``, so this script removes the
check after generating. No ``_pb2_grpc`` module is generated: the connector's controller client and
the emulator build their gRPC method paths from the service name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_PROTO_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PROTO_DIR.parents[2]
_PROTO = _PROTO_DIR / "controller.proto"


def _strip_protobuf_version_check(text: str) -> str:
    text = re.sub(r"from google\.protobuf import runtime_version as _runtime_version\n", "", text)
    return re.sub(r"_runtime_version\.ValidateProtobufRuntimeVersion\([^)]*\)\n", "", text, flags=re.S)


def main() -> int:
    """Run protoc and post-process its output; return the process exit code."""
    from grpc_tools import protoc

    relative = _PROTO.relative_to(_REPO_ROOT)
    code = protoc.main(["grpc_tools.protoc", f"-I{_REPO_ROOT}", f"--python_out={_REPO_ROOT}", str(relative)])
    if code != 0:
        return code
    pb2 = _PROTO_DIR / "controller_pb2.py"
    pb2.write_text(_strip_protobuf_version_check(pb2.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
