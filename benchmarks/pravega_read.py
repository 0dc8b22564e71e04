"""Benchmark: a bounded Spark read with ``format("pravega")`` against the official client's reader group.

On one Pravega server in one run (``--backend``: the real Pravega standalone 0.13.0 by default, or
the project's emulator): ``--events`` events (default 1,000,000) of ``--size`` bytes
(100) over ``--segments`` segments (4) are read (a) through Spark ``local[2]`` with segment splits
(summing the event lengths) and (b) by a reader group of the official ``pravega_client`` with one
reader per segment, all in one process (``get_segment_slice_async``, summing the event lengths).
Prints events/s of both and the ratio. Each side runs ``--warmup`` untimed rounds first (default 3:
the first Spark read starts the Python workers, and the JVM keeps compiling Spark's Arrow-to-row and
aggregation paths over the first few reads, a third of a round's time), then ``--rounds`` timed
rounds (default 3); the best counts. Also printed: Spark's own floor for the same query (a source
yielding pre-built Arrow batches of the same schema, ``benchmarks/spark_floor.py``; its timed
rounds take turns with the connector's, so a change of load falls on both, and the ratio of each
pair is printed), the connector's segment readers without Spark, and a cold read: the first query
of the fresh Spark session (the first warm-up round), against the best warm round (goal <= 1.5).

    python benchmarks/pravega_read.py                    # 1,000,000 events on the standalone server
    python benchmarks/pravega_read.py --events 100000    # quick run
    python benchmarks/pravega_read.py --backend emulator
    python -m benchmarks.pravega_read --profile /tmp/prof   # + where the time goes (below)

``--profile DIR`` also prints, for every timed Spark round of both the connector and the floor, the
CPU seconds of the JVM and of the Python workers, the tasks' durations and the scan's metrics
(``benchmarks/spark_metrics.py``), and records the Python workers with py-spy during each timed
round (``DIR/pravega-N.raw``, ``DIR/floor-N.raw``), summed by category at the end
(``benchmarks/profile_summary.py``). py-spy takes CPU of its own: compare the ratios of a run
without it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparkflow_testing.pravega.cluster import (  # noqa: E402
    Backend,
    pravega_cluster,
    run_isolated,
    unique_name,
)

ROUTING_KEYS = 64
_BROKER = {Backend.STANDALONE: b"pravega-standalone", Backend.EMULATOR: b"pravega_emulator"}
"""How ``--profile`` finds the server's processes (command line)."""


def write(uri: str, scope: str, stream: str, events: int, size: int, segments: int) -> float:
    """Create the stream and write ``events`` distinct events (runs in a child process)."""
    import pravega_client

    manager = pravega_client.StreamManager(uri)
    manager.create_scope(scope)
    manager.create_stream(scope, stream, segments)
    writer = manager.create_writer(scope, stream, 100_000)
    pad = os.urandom(size)
    start = time.perf_counter()
    for i in range(events):
        writer.write_event_bytes((b"%010d" % i) + pad[10:], f"k{i % ROUTING_KEYS}")
    writer.flush()
    return time.perf_counter() - start


def reader_group_read(uri: str, scope: str, stream: str, events: int, readers: int) -> tuple[float, int]:
    """Seconds for a reader group of ``readers`` readers to read every event, and the bytes read."""
    import asyncio

    import pravega_client

    manager = pravega_client.StreamManager(uri)
    group = manager.create_reader_group(unique_name("bench"), scope, stream, False)
    members = [group.create_reader(f"r{i}") for i in range(readers)]
    total = [0, 0]

    async def loop(reader: Any) -> None:
        while total[0] < events:
            segment_slice = await reader.get_segment_slice_async()
            n = size = 0
            for event in segment_slice:
                size += len(event.data())
                n += 1
            total[0] += n
            total[1] += size
            reader.release_segment(segment_slice)

    async def main() -> None:
        tasks = [asyncio.ensure_future(loop(r)) for r in members]
        while total[0] < events:
            await asyncio.sleep(0.005)
        for t in tasks:
            t.cancel()

    start = time.perf_counter()
    asyncio.run(main())
    elapsed = time.perf_counter() - start
    return elapsed, total[1]


def spark_read(spark: Any, uri: str, scope: str, stream: str) -> tuple[float, int, int]:
    """Seconds for a bounded Spark read, the event count and the bytes read."""
    start = time.perf_counter()
    row = (
        spark.read.format("pravega")
        .option("controller", uri)
        .option("scope", scope)
        .option("stream", stream)
        .load()
        .selectExpr("count(*) as n", "sum(length(event)) as b")
        .collect()[0]
    )
    return time.perf_counter() - start, int(row["n"]), int(row["b"] or 0)


def direct_read(uri: str, scope: str, stream: str) -> tuple[float, int]:
    """Seconds for the connector's segment split readers without Spark (one process), and events read."""
    from connector_base.spark import to_arrow_schema
    from connector_base.spark.partition_reader import read_splits_as_arrow
    from connectors.pravega import PravegaSegmentPlanner, PravegaSource, PravegaSourceOptions
    from connectors.pravega.controller_client import ConnectionSettings, ControllerClient
    from connectors.pravega.datasource import PRAVEGA_SCHEMA
    from connectors.pravega.split import PravegaSegmentSplit

    options = PravegaSourceOptions.parse({"controller": uri, "scope": scope, "stream": stream}, False)
    planner = PravegaSegmentPlanner(options)
    controller = ControllerClient(ConnectionSettings(uri))
    splits = []
    for seg in controller.current_segments(scope, stream):
        open_split = PravegaSegmentSplit(scope, stream, seg.segment_id, 0)
        end = planner.end_positions({open_split.split_id: (open_split, 0)})[open_split.split_id]
        splits.append(PravegaSegmentSplit(scope, stream, seg.segment_id, 0, int(end)))
    planner.close()
    controller.close()
    start = time.perf_counter()
    rows = 0
    for batch in read_splits_as_arrow(PravegaSource(options), splits, to_arrow_schema(PRAVEGA_SCHEMA)):
        rows += batch.num_rows
    return time.perf_counter() - start, rows


class _Profiler:
    """``--profile``: CPU per process kind and Spark's task metrics per query, py-spy per phase."""

    def __init__(self, spark: Any, directory: str, broker_match: bytes) -> None:
        from benchmarks.spark_metrics import ProcessCpu

        os.makedirs(directory, exist_ok=True)
        self.spark = spark
        self.directory = directory
        self.cpu = ProcessCpu(spark, broker_match=broker_match)

    def run(self, name: str, run: Any) -> Any:
        """``run()``'s result (its seconds, or a tuple starting with them), recorded as ``name``.raw.

        The query's figures are printed.
        """
        from benchmarks.spark_metrics import PySpyRecorder, format_report, last_query_report

        recorder = PySpyRecorder(self.spark, os.path.join(self.directory, name + ".raw"))
        before = self.cpu.sample()
        result = run()
        after = self.cpu.sample()
        recorder.stop()
        seconds = result[0] if isinstance(result, tuple) else result
        print(format_report(name, seconds, (before, after), last_query_report(self.spark)))
        return result


def main() -> None:
    """Run the benchmark and print both rates and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3, help="untimed rounds of each side first")
    parser.add_argument(
        "--backend", choices=(Backend.STANDALONE, Backend.EMULATOR), default=Backend.STANDALONE
    )
    parser.add_argument(
        "--profile", metavar="DIR", help="CPU, task metrics and py-spy stacks of the timed rounds"
    )
    args = parser.parse_args()

    started = time.perf_counter()
    with pravega_cluster(backend=args.backend) as cluster:
        ready = time.perf_counter() - started
        print(f"{args.backend} Pravega ready in {ready:.1f} s; load average {os.getloadavg()}")
        uri = cluster.controller_uri
        scope, stream = unique_name("bench"), unique_name("events")
        took = run_isolated(write, uri, scope, stream, args.events, args.size, args.segments, timeout=3600)
        print(f"wrote {args.events:,} events of {args.size} B over {args.segments} segments in {took:.1f} s")

        from connector_base.spark import local_spark_session

        spark = local_spark_session("pravega-bench", cores=2)
        spark.sparkContext.setLogLevel("ERROR")
        expected_bytes = args.events * args.size
        from benchmarks.spark_floor import floor_read
        from connectors.pravega.datasource import PRAVEGA_SCHEMA

        # cold: the first query of this fresh session (workers forked, imports, first connections)
        cold, n, size = spark_read(spark, uri, scope, stream)
        assert n == args.events and size == expected_bytes, (n, size)
        print(f"  cold first read: {cold:.2f} s (load {os.getloadavg()[0]:.1f})")
        for _ in range(args.warmup - 1):
            spark_read(spark, uri, scope, stream)
        profiler = _Profiler(spark, args.profile, _BROKER[args.backend]) if args.profile else None

        def floor_round() -> float:
            return floor_read(spark, PRAVEGA_SCHEMA, args.events, "event", partitions=min(2, args.segments))

        for _ in range(args.warmup):
            floor_round()
        # the floor and the connector take turns, so a change of the machine's load falls on both
        floor = best_spark = float("inf")
        pair_ratios = []
        for r in range(args.rounds):
            floor_s = profiler.run(f"floor-{r + 1}", floor_round) if profiler else floor_round()
            read = lambda: spark_read(spark, uri, scope, stream)  # noqa: E731
            seconds, n, size = profiler.run(f"pravega-{r + 1}", read) if profiler else read()
            assert n == args.events and size == expected_bytes, (n, size)
            print(
                f"  round {r + 1}: floor {floor_s:.2f} s, spark {seconds:.2f} s "
                f"(load {os.getloadavg()[0]:.1f})"
            )
            floor, best_spark = min(floor, floor_s), min(best_spark, seconds)
            pair_ratios.append(floor_s / seconds)
        best_rg = float("inf")
        for r in range(-args.warmup, args.rounds):
            seconds, size = run_isolated(
                reader_group_read, uri, scope, stream, args.events, args.segments, timeout=3600
            )
            assert size >= expected_bytes, size
            if r >= 0:
                print(f"  reader group round {r + 1}: {seconds:.2f} s")
                best_rg = min(best_rg, seconds)
        spark.stop()
        best_direct = min(
            run_isolated(direct_read, uri, scope, stream, timeout=3600)[0] for _ in range(args.rounds)
        )

    print(f"backend: {args.backend}; load average after the run {os.getloadavg()}")
    spark_rate = args.events / best_spark
    rg_rate = args.events / best_rg
    print(f"spark format('pravega') segment splits: {spark_rate:,.0f} events/s ({best_spark:.2f} s)")
    print(
        f"official client reader group ({args.segments} readers, one process): "
        f"{rg_rate:,.0f} events/s ({best_rg:.2f} s)"
    )
    print(f"ratio (spark / reader group): {spark_rate / rg_rate:.2f}x")
    print(
        f"Spark's own floor for this query (pre-built Arrow batches of the same schema, no I/O): "
        f"{args.events / floor:,.0f} events/s ({floor:.2f} s), ratio to the reader group "
        f"{args.events / floor / rg_rate:.2f}x"
    )
    print(
        f"(segment split readers without Spark, one process: {args.events / best_direct:,.0f} events/s; "
        "the connector's own read path)"
    )
    print(
        f"cold / warm time: {cold / best_spark:.2f} (goal <= 1.5; cold {cold:.2f} s, warm {best_spark:.2f} s)"
    )
    print(
        f"connector / floor: {floor / best_spark:.2f} (best of each); per round "
        + ", ".join(f"{x:.2f}" for x in pair_ratios)
    )
    if args.profile:
        from benchmarks.profile_summary import print_summary

        for name in ("pravega", "floor"):
            files = [os.path.join(args.profile, f"{name}-{r + 1}.raw") for r in range(args.rounds)]
            print(f"py-spy, {name} rounds ({args.profile}/{name}-N.raw):")
            print_summary(files, top=12)


if __name__ == "__main__":
    main()
