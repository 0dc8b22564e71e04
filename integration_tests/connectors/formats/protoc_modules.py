"""Python message modules generated from ``.proto`` text by protoc at test time (``grpc_tools``).

What a producer application has: confluent-kafka's ``ProtobufSerializer`` and ``ProtobufDeserializer``
take a generated message class. ``generated_module`` writes the files, runs protoc on each (the
well-known types of ``grpc_tools`` on the include path) and imports the module of the last one.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

__all__ = ["generated_module"]


@contextmanager
def generated_module(out: Path, protos: dict[str, str]) -> Iterator[ModuleType]:
    """The ``<name>_pb2`` module of the last of ``protos`` (file name -> text), importable while open."""
    from grpc_tools import protoc

    include = Path(protoc.__file__).parent / "_proto"
    for name, text in protos.items():
        (out / name).write_text(text)
    for name in protos:
        assert protoc.main(["protoc", f"-I{out}", f"-I{include}", f"--python_out={out}", name]) == 0
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(Path(list(protos)[-1]).stem + "_pb2")
    finally:
        sys.path.remove(str(out))
