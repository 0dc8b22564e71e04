"""Event time: timestamps, watermarks per split, idleness and watermark alignment (FLIP-27/182/217).

A ``WatermarkStrategy`` pairs a ``TimestampAssigner`` with a ``WatermarkGenerator`` factory, and
may add idleness and an alignment group. A runtime wraps a reader's output in
``ProgressiveTimestampsAndWatermarks``: each split gets its own generator, and the reader's
watermark is the minimum over the splits that are not idle (``WatermarkOutputMultiplexer``).
"""

from connector_base.event_time.input_activity import (
    AlwaysCaughtUp,
    InputActivity,
    RelativeClock,
    SplitActivity,
    SystemClock,
)
from connector_base.event_time.progressive_timestamps_and_watermarks import (
    ProgressiveTimestampsAndWatermarks,
)
from connector_base.event_time.timestamp_assigner import (
    ColumnTimestampAssigner,
    RecordTimestampAssigner,
    TimestampAssigner,
)
from connector_base.event_time.watermark import MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP, Watermark
from connector_base.event_time.watermark_generator import (
    BoundedOutOfOrdernessWatermarks,
    NoWatermarksGenerator,
    WatermarkGenerator,
)
from connector_base.event_time.watermark_output import WatermarkOutput
from connector_base.event_time.watermark_output_multiplexer import WatermarkOutputMultiplexer
from connector_base.event_time.watermark_strategy import WatermarkAlignmentParams, WatermarkStrategy
from connector_base.event_time.watermarks_with_idleness import WatermarksWithIdleness

__all__ = [
    "MAX_WATERMARK",
    "MIN_WATERMARK",
    "NO_TIMESTAMP",
    "AlwaysCaughtUp",
    "BoundedOutOfOrdernessWatermarks",
    "ColumnTimestampAssigner",
    "InputActivity",
    "NoWatermarksGenerator",
    "ProgressiveTimestampsAndWatermarks",
    "RecordTimestampAssigner",
    "RelativeClock",
    "SplitActivity",
    "SystemClock",
    "TimestampAssigner",
    "Watermark",
    "WatermarkAlignmentParams",
    "WatermarkGenerator",
    "WatermarkOutput",
    "WatermarkOutputMultiplexer",
    "WatermarkStrategy",
    "WatermarksWithIdleness",
]
