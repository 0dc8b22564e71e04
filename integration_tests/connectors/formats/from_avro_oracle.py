"""Spark's own ``from_avro`` (spark-avro from Maven Central) as an oracle, run in a child process.

``python -m integration_tests.connectors.formats.from_avro_oracle`` reads JSON cases from stdin
(``[{"schema": <avro json>, "payloads": [<hex>, ...]}, ...]``), decodes each with
``from_avro(value, schema)`` in a ``local[1]`` session that has spark-avro on its classpath, and
writes one JSON line per case: the Spark type of ``v`` and the decoded column as an Arrow IPC
stream (base64). Its own
process because jars cannot join a running session, and the test session's Spark has none.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any

from sparkflow_testing.maven import resolve_classpath
from sparkflow_testing.spark.kafka_source import NEWEST_SERVED, SCALA_BINARY, not_shipped, pyspark_jar_names

SPARK_AVRO = f"org.apache.spark:spark-avro_{SCALA_BINARY}:{NEWEST_SERVED}"
"""Maven Central serves spark-avro up to the version Spark's Kafka module is served at (4.3.0 is not)."""


def spark_avro_jars() -> list[str]:
    """spark-avro and what it needs beyond pyspark's own jars."""
    libs = resolve_classpath(f"spark-avro-{NEWEST_SERVED}", [SPARK_AVRO])
    return [str(p) for p in not_shipped(libs.glob("*.jar"), pyspark_jar_names())]


def run_oracle(module: str, cases: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Run ``python -m <module>`` on ``cases`` from the test: ``(Spark type, Arrow table)`` per case."""
    import subprocess
    from pathlib import Path

    import pyarrow as pa

    root = Path(__file__).resolve().parents[3]
    env = {
        **os.environ,
        "TZ": "UTC",
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    env["PYSPARK_PYTHON"] = sys.executable
    done = subprocess.run(
        [sys.executable, "-m", module],
        input=json.dumps(cases), capture_output=True, text=True, timeout=500, env=env, cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    out = [json.loads(ln) for ln in lines if ln.startswith("{")]
    return [(o["type"], pa.ipc.open_stream(base64.b64decode(o["arrow"])).read_all()) for o in out]


def arrow_line(decoded: Any) -> str:
    """The JSON line of a decoded DataFrame (column ``v``): its Spark type, its rows as Arrow IPC."""
    import pyarrow as pa

    # the raw batches: toArrow() casts to the schema's non-null flags and refuses null structs
    out = pa.Table.from_batches(decoded._collect_as_arrow())
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, out.schema) as writer:
        writer.write_table(out)
    arrow = base64.b64encode(sink.getvalue().to_pybytes()).decode()
    return json.dumps({"type": decoded.schema["v"].dataType.simpleString(), "arrow": arrow})


def serve_cases(jars: list[str], decode: Any) -> None:
    """Print ``arrow_line(decode(df, case))`` for each JSON case on stdin (``df``: one binary ``value``)."""
    from pyspark.sql import SparkSession

    os.environ["TZ"] = "UTC"
    cases = json.load(sys.stdin)
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "512m")
        .getOrCreate()
    )
    try:
        for case in cases:
            rows = [(bytes.fromhex(h),) for h in case["payloads"]]
            df = spark.createDataFrame(rows, "value binary")
            print(arrow_line(decode(df, case)), flush=True)
    finally:
        spark.stop()


def main() -> None:
    """Decode the cases on stdin with Spark's from_avro."""
    from pyspark.sql.avro.functions import from_avro

    serve_cases(
        spark_avro_jars(),
        lambda df, case: df.select(from_avro("value", json.dumps(case["schema"])).alias("v")),
    )


if __name__ == "__main__":
    main()
