"""The connector test kit: a reusable pytest suite every connector instantiates.

Like Flink's connector testing framework: a connector provides a ``SourceTestContext`` (how to
create its source and Spark options, how to write test data) and subclasses ``SourceTestSuite``;
the suite checks exactly-once reads, checkpoint/restore at arbitrary points, splits discovered
later, reader failure and recovery, Spark batch versus ``Trigger.AvailableNow``, and early, clear
errors for invalid options.
"""

from connector_base.testing.recording_enumerator_context import RecordingEnumeratorContext
from connector_base.testing.source_test_context import SourceTestContext
from connector_base.testing.source_test_suite import SourceTestSuite

__all__ = ["RecordingEnumeratorContext", "SourceTestContext", "SourceTestSuite"]
