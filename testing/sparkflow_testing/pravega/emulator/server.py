"""The emulator process: controller, segment store and control interface on one asyncio loop."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import grpc

from .control import ControlServer
from .controller import ControllerServicer, build_server
from .metadata import Metadata
from .segment_store import SegmentStoreServer
from .storage import SegmentStorage

__all__ = ["PravegaEmulator", "EmulatorPorts"]

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmulatorPorts:
    """The ports an emulator listens on."""

    controller: int
    segment_store: int
    control: int


class PravegaEmulator:
    """Owns the shared state and the three servers.

    Threading: all servers run on the asyncio loop that calls :meth:`start`; never run this in the
    same process as the official client (it holds the GIL in blocking calls and would stall the
    loop).
    """

    def __init__(self, host: str = "127.0.0.1", data_dir: Path | None = None, tail_wait: float = 1.0) -> None:
        self.host = host
        self.storage = SegmentStorage(data_dir)
        self.metadata = Metadata(self.storage)
        self.storage.load()
        self.metadata.load_json(self.storage.extra_state)
        self.storage.snapshot_provider = self.metadata.to_json
        self.segment_store = SegmentStoreServer(self.storage, tail_wait=tail_wait)
        self.control = ControlServer(self.metadata, self.storage)
        self._grpc: grpc.aio.Server | None = None

    async def start(
        self,
        controller_port: int = 0,
        segment_store_port: int = 0,
        control_port: int = 0,
        published_segment_store_port: int = 0,
    ) -> EmulatorPorts:
        """Bind all servers (0 = any free port) and return the bound ports.

        ``published_segment_store_port`` is the port the controller names for the segment store
        (a proxy in front of it); 0 names the store's own port.
        """
        store_port = await self.segment_store.start(self.host, segment_store_port)
        servicer = ControllerServicer(self.metadata, self.host, published_segment_store_port or store_port)
        self._grpc = server = build_server(servicer)
        bound = server.add_insecure_port(f"{self.host}:{controller_port}")
        if bound == 0:
            raise OSError(f"cannot bind the controller to {self.host}:{controller_port}")
        servicer.controller_port = bound
        await server.start()
        ctl_port = await self.control.start(self.host, control_port)
        ports = EmulatorPorts(bound, store_port, ctl_port)
        _LOG.info(
            "Pravega emulator: controller tcp://%s:%d, segment store %s:%d, control http://%s:%d",
            self.host,
            ports.controller,
            self.host,
            ports.segment_store,
            self.host,
            ports.control,
        )
        return ports

    async def stop(self) -> None:
        """Stop every server and flush the data directory."""
        if self._grpc is not None:
            await self._grpc.stop(grace=0.5)
        await self.control.stop()
        await self.segment_store.stop()
        self.storage.close()
        _LOG.info("Pravega emulator stopped")
