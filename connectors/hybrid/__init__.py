"""``format("hybrid")``: several sources read one after the other, e.g. history from files, then Kafka.

Options: ``sources`` (format names, every one but the last bounded), each source's options prefixed
by its format name (``files-unified.path``, ``kafka-unified.subscribe``), and how each next source
starts (``hybrid.switchStart``: ``derived`` from the previous source's maximum
``hybrid.eventTimeColumn`` minus ``hybrid.switchOverlap``, a ``timestamp`` given in
``hybrid.switchTimestamp``, or ``configured`` by the next source's own starting options). The
machinery is ``connector_base.hybrid``; see docs/backlog-and-hybrid.md.
"""

from connectors.hybrid.datasource import HybridDataSource
from connectors.hybrid.options import HybridOptions

__all__ = ["HybridDataSource", "HybridOptions"]
