"""Command line: ``python -m sparkflow_testing.pravega.emulator``.

Prints one JSON line to stdout once every port is bound, for example::

    {"controller_uri": "tcp://127.0.0.1:9090", "controller_port": 9090, "segment_store_port": 12345,
     "control_url": "http://127.0.0.1:23456", "control_port": 23456}

Logs go to stderr. SIGTERM or SIGINT stops it cleanly (the data directory is flushed), and so does
the end of the process given with ``--parent-pid``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path

from .server import PravegaEmulator


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sparkflow_testing.pravega.emulator",
        description="Pravega protocol emulator for tests (controller gRPC + segment store wire protocol).",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind and advertise (default 127.0.0.1)"
    )
    parser.add_argument(
        "--controller-port",
        "--port",
        dest="controller_port",
        type=int,
        default=9090,
        help="controller gRPC port; 0 picks a free one (default 9090)",
    )
    parser.add_argument(
        "--segment-store-port", type=int, default=0, help="segment store port; 0 picks a free one (default 0)"
    )
    parser.add_argument(
        "--published-segment-store-port",
        type=int,
        default=0,
        help="segment store port the controller names to clients (a proxy's); 0: the store's own (default 0)",
    )
    parser.add_argument(
        "--control-port",
        type=int,
        default=0,
        help="JSON/HTTP control port of the emulator itself; 0 picks a free one (default 0)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep data here and reload it at start (default: memory only)",
    )
    parser.add_argument(
        "--tail-wait-ms",
        type=int,
        default=1000,
        help="how long a read at the tail waits for data before answering empty (default 1000)",
    )
    parser.add_argument("--log-level", default="INFO", help="log level on stderr (default INFO)")
    parser.add_argument(
        "--parent-pid",
        type=int,
        default=None,
        help="stop when this process is gone (test fixtures pass their own pid)",
    )
    return parser


async def _run(args: argparse.Namespace) -> None:
    emulator = PravegaEmulator(args.host, args.data_dir, tail_wait=args.tail_wait_ms / 1000)
    ports = await emulator.start(
        args.controller_port, args.segment_store_port, args.control_port, args.published_segment_store_port
    )
    print(
        json.dumps(
            {
                "controller_uri": f"tcp://{args.host}:{ports.controller}",
                "controller_port": ports.controller,
                "segment_store_port": ports.segment_store,
                "control_url": f"http://{args.host}:{ports.control}",
                "control_port": ports.control,
            }
        ),
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    watcher = None
    if args.parent_pid is not None:
        watcher = asyncio.create_task(_watch_parent(args.parent_pid, stop))
    await stop.wait()
    if watcher is not None:
        watcher.cancel()
    await emulator.stop()


async def _watch_parent(pid: int, stop: asyncio.Event) -> None:
    """Set ``stop`` once ``pid`` no longer exists (a killed test run must not leave us behind)."""
    while not stop.is_set():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            logging.getLogger(__name__).warning("parent process %d is gone; stopping", pid)
            stop.set()
            return
        except PermissionError:
            pass  # exists, owned by someone else
        await asyncio.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    """Run the emulator until SIGTERM/SIGINT; return the exit code."""
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("grpc").setLevel(logging.WARNING)
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(_run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
