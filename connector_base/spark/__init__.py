"""The Spark bridge: turns a ``Source`` plus a ``SplitPlanner`` into a PySpark data source."""

from connector_base.spark.arrow_output import ArrowBatchOutput
from connector_base.spark.bridge import SourceDataSource, SplitsPartition, to_arrow_schema
from connector_base.spark.offsets import BridgeOffset, SplitEntry
from connector_base.spark.planner import Backlog, Position, RangePacking, SplitPlanner
from connector_base.spark.read_limit_options import ReadLimitOptions, parse_duration_ms, parse_positive_int
from connector_base.spark.read_limits import admit
from connector_base.spark.session import ensure_pyspark_python, local_spark_session

__all__ = [
    "ArrowBatchOutput",
    "Backlog",
    "BridgeOffset",
    "Position",
    "RangePacking",
    "ReadLimitOptions",
    "SourceDataSource",
    "SplitEntry",
    "SplitPlanner",
    "SplitsPartition",
    "admit",
    "ensure_pyspark_python",
    "local_spark_session",
    "parse_duration_ms",
    "parse_positive_int",
    "to_arrow_schema",
]
