"""Regenerate ``controller_pb2.py`` and ``controller_pb2_grpc.py`` from ``controller.proto``.

Run from the repository root with the test extras installed (grpcio-tools)::

    python -m connectors.testing.pravega_emulator.proto.regenerate

The generated modules are committed so that running the emulator needs only ``grpcio`` and
``protobuf``. Recent ``protoc`` releases stamp the generated code with a check that refuses older
runtimes (``protobuf`` before the generator's version, ``grpcio`` before the tool's version) and
use two grpcio arguments newer than 1.60. The project supports ``protobuf>=4.25`` and
``grpcio>=1.60``, so this script removes the checks and those arguments after generating.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_PROTO_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PROTO_DIR.parents[3]
_PROTO = _PROTO_DIR / "controller.proto"


def _strip_protobuf_version_check(text: str) -> str:
    text = re.sub(r"from google\.protobuf import runtime_version as _runtime_version\n", "", text)
    return re.sub(r"_runtime_version\.ValidateProtobufRuntimeVersion\([^)]*\)\n", "", text, flags=re.S)


def _strip_grpc_version_check(text: str) -> str:
    start = text.find("GRPC_GENERATED_VERSION")
    end = text.find("\n\n\nclass ", start)
    if start < 0 or end < 0:
        return text
    text = text[:start] + "# (generator version check removed by regenerate.py)" + text[end:]
    # ``_registered_method`` and ``add_registered_method_handlers`` arrived after grpcio 1.60; the
    # generic handler registered just before does the same job on every version.
    text = re.sub(r",\s*_registered_method=True", "", text)
    return re.sub(r"\n\s*server\.add_registered_method_handlers\([^)]*\)", "", text)


def main() -> int:
    """Run protoc and post-process its output; return the process exit code."""
    from grpc_tools import protoc

    relative = _PROTO.relative_to(_REPO_ROOT)
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{_REPO_ROOT}",
            f"--python_out={_REPO_ROOT}",
            f"--grpc_python_out={_REPO_ROOT}",
            str(relative),
        ]
    )
    if code != 0:
        return code
    pb2 = _PROTO_DIR / "controller_pb2.py"
    pb2.write_text(_strip_protobuf_version_check(pb2.read_text()))
    pb2_grpc = _PROTO_DIR / "controller_pb2_grpc.py"
    pb2_grpc.write_text(_strip_grpc_version_check(pb2_grpc.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
