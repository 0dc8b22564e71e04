"""Benchmark: the project's Pravega writer against the official client's writer, in one run.

On one Pravega server (``--backend``: the real Pravega standalone 0.13.0 by default, or the project's
emulator; ``--controller URI`` uses a running one), ``--events`` events (default 1,000,000) of
``--size`` bytes (100) with ``--keys`` routing keys (64) are written to a fresh stream of
``--segments`` segments (4), four ways each for the project's writer and the official one:

* plain: write every event, then flush (every event acknowledged);
* transaction: open a transaction, write every event, commit (the project's writer waits until the
  controller reports ``COMMITTED``; the official ``Transaction.commit()`` returns when the
  controller accepted the commit, so the comparison favours the official client).

The project's writer is timed as the sink calls it (``write_many`` with a list of payloads and a
list of keys per Arrow batch of 10,000) and per event (``write(payload, key)``), the official
client per event (``write_event_bytes``: it has no batch call). Every writer runs in a fresh
spawned child process (the official client holds the GIL while it blocks); the payloads are built
before the clock starts. Each case runs ``--rounds`` times (default 2), in turns, the best counts.
Prints events/s and the ratio ours / official (goal >= 1.0).

    python benchmarks/pravega_write.py                      # 1,000,000 events on the standalone
    python benchmarks/pravega_write.py --events 100000      # quick run
    python benchmarks/pravega_write.py --controller tcp://127.0.0.1:9090
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparkflow_testing.pravega.cluster import Backend, pravega_cluster, run_isolated, unique_name  # noqa: E402
from sparkflow_testing.pravega.standalone import PravegaStandalone  # noqa: E402

BATCH = 10_000
"""Events per ``write_many`` call (the sink's Arrow batch)."""


def _payloads(events: int, size: int, keys: int) -> tuple[list[bytes], list[str]]:
    pad = os.urandom(max(0, size - 8))
    return [i.to_bytes(8, "big") + pad for i in range(events)], [f"key-{i % keys}" for i in range(events)]


def _stream(uri: str, segments: int) -> tuple[str, str]:
    from connectors.pravega.controller_client import ConnectionSettings, shared_controller

    controller = shared_controller(ConnectionSettings(uri))
    scope, stream = unique_name("bsc"), unique_name("bst")
    controller.create_scope(scope)
    controller.create_stream(scope, stream, segments)
    return scope, stream


def _drop(uri: str, scope: str, stream: str) -> None:
    """Delete the stream: the standalone keeps segments in its heap (1 GiB), which 1M-event rounds fill."""
    from sparkflow_testing.pravega.admin import admin_for

    admin = admin_for(uri)
    try:
        admin.delete_stream(scope, stream)
    finally:
        admin.close()


def ours(uri: str, mode: str, events: int, size: int, keys: int, segments: int) -> float:
    """Seconds the project's writer takes (runs in a child)."""
    from connectors.pravega.controller_client import ConnectionSettings
    from connectors.pravega.event_writer import PravegaEventWriter
    from connectors.pravega.transactional_writer import PravegaTransactionalWriter

    scope, stream = _stream(uri, segments)
    settings = ConnectionSettings(uri)
    payloads, routing = _payloads(events, size, keys)
    began = time.perf_counter()
    if mode == "txn":
        txn = PravegaTransactionalWriter(settings, scope, stream).begin()
        for i in range(0, events, BATCH):
            txn.write_many(payloads[i : i + BATCH], routing[i : i + BATCH])  # type: ignore[arg-type]
        txn.commit()
    else:
        writer = PravegaEventWriter(settings, scope, stream)
        if mode == "batch":
            for i in range(0, events, BATCH):
                writer.write_many(payloads[i : i + BATCH], routing[i : i + BATCH])  # type: ignore[arg-type]
        else:
            write = writer.write
            for payload, key in zip(payloads, routing, strict=True):
                write(payload, key)
        writer.flush()
    elapsed = time.perf_counter() - began
    if mode != "txn":
        writer.close()
    _drop(uri, scope, stream)
    return elapsed


def official(uri: str, mode: str, events: int, size: int, keys: int, segments: int) -> float:
    """Seconds the official client's writer takes (runs in a child)."""
    import pravega_client

    scope, stream = _stream(uri, segments)
    manager = pravega_client.StreamManager(uri)
    payloads, routing = _payloads(events, size, keys)
    began = time.perf_counter()
    if mode == "txn":
        txn_writer = manager.create_transaction_writer(scope, stream, 1)  # keep it: it pings
        txn = txn_writer.begin_txn()
        write = txn.write_event_bytes
        for payload, key in zip(payloads, routing, strict=True):
            write(payload, key)
        txn.commit()
    else:
        writer = manager.create_writer(scope, stream, 100_000)
        write = writer.write_event_bytes
        for payload, key in zip(payloads, routing, strict=True):
            write(payload, key)
        writer.flush()
    elapsed = time.perf_counter() - began
    _drop(uri, scope, stream)
    return elapsed


CASES = {
    "plain": (
        ("ours write_many", ours, "batch"),
        ("ours write", ours, "event"),
        ("official", official, "plain"),
    ),
    "transaction": (("ours write_many", ours, "txn"), ("official", official, "txn")),
}


def run(uri: str, args: argparse.Namespace) -> None:
    """Every case ``--rounds`` times in turns; print the best events/s and the ratios."""
    best: dict[tuple[str, str], float] = {}
    for round_ in range(args.rounds):
        for case, writers in CASES.items():
            for name, func, mode in writers:
                seconds = run_isolated(
                    func, uri, mode, args.events, args.size, args.keys, args.segments, timeout=1800
                )
                rate = args.events / seconds
                print(
                    f"round {round_ + 1} {case:<11} {name:<16} {seconds:7.2f} s  {rate:>12,.0f} events/s",
                    flush=True,
                )
                best[(case, name)] = max(best.get((case, name), 0.0), rate)
    print(
        f"\n{args.events:,} events of {args.size} B, {args.keys} keys, {args.segments} segments; "
        f"best of {args.rounds}"
    )
    for case, writers in CASES.items():
        base = best[(case, "official")]
        for name, _f, _m in writers:
            rate = best[(case, name)]
            print(f"{case:<11} {name:<16} {rate:>12,.0f} events/s   ratio {rate / base:5.2f}x")


def main() -> None:
    """Parse the arguments, start (or use) a server, run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--keys", type=int, default=64)
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--backend", choices=[Backend.STANDALONE, Backend.EMULATOR], default=Backend.STANDALONE
    )
    parser.add_argument("--controller", help="a running Pravega's controller URI (no server is started)")
    parser.add_argument("--heap", default="4g", help="the standalone JVM heap (it keeps segments in memory)")
    args = parser.parse_args()
    if args.controller:
        run(args.controller, args)
        return
    if args.backend == Backend.STANDALONE:
        server = PravegaStandalone(Path("/tmp") / unique_name("bench-pravega-write"), heap=args.heap)
        server.start()
        try:
            run(server.controller_uri, args)
        finally:
            server.stop()
        return
    with pravega_cluster(
        log_dir=Path("/tmp") / unique_name("bench-pravega-write"), backend=args.backend
    ) as cluster:
        run(cluster.controller_uri, args)


if __name__ == "__main__":
    main()
