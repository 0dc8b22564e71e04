"""``LagListener``: a ``StreamingQueryListener`` that turns progress events into lag and backlog figures.

Python sources cannot fill a progress event's ``metrics`` in Spark 4.3, so the bridge publishes its
figures as the source's ``latestOffset`` (``reportLatestOffset``, see backlog.py). This listener reads
them back from every progress event: it keeps the last samples, logs one line per source and batch,
and, when given a Prometheus registry (the ``metrics`` extra, ``prometheus_client``), sets gauges::

    spark.streams.addListener(LagListener(prometheus=True))            # the default registry
    listener.serve(9108)                                               # or your own HTTP endpoint

Threading: Spark delivers events on its listener thread; ``samples`` is safe to read from others.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener
from typing_extensions import override

from connector_base.errors import ConnectorError

__all__ = ["LagListener", "LagSample", "lag_samples"]

LOG = logging.getLogger(__name__)

DEFAULT_KEEP = 1000
_GAUGES = {
    "records": "Records the source is behind its latest position (after the batch)",
    "bytes": "Bytes the source is behind its latest position (after the batch)",
    "ms": "Milliseconds the source is behind (at least; after the batch)",
    "pendingSplits": "Splits with data still to read",
}


@dataclass(frozen=True, slots=True)
class LagSample:
    """One source of one progress event."""

    query_id: str
    query_name: str | None
    batch_id: int
    source: str
    num_input_rows: int
    backlog: bool
    lag_records: int | None
    lag_bytes: int | None
    lag_ms: int | None
    pending_splits: int | None
    worst_split: str | None
    latest: Mapping[str, Any]


def _parse(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, str) or not raw.startswith("{"):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def lag_samples(progress: Any) -> list[LagSample]:
    """The lag samples of a ``StreamingQueryProgress`` (sources that publish no lag are left out)."""
    out = []
    for source in progress.sources:
        report = _parse(source.latestOffset)
        if report is None or "lag" not in report or "backlog" not in report:
            continue
        lag = report.get("lag") or {}
        worst = lag.get("maxSplit") or {}
        out.append(
            LagSample(
                str(progress.id),
                progress.name,
                int(progress.batchId),
                str(source.description),
                int(source.numInputRows),
                bool(report["backlog"]),
                lag.get("records"),
                lag.get("bytes"),
                lag.get("ms"),
                lag.get("pendingSplits"),
                worst.get("id"),
                report.get("latest") or {},
            )
        )
    return out


def _prometheus() -> Any:
    try:
        import prometheus_client
    except ImportError as e:
        raise ConnectorError(
            "exporting lag to Prometheus needs the prometheus_client package: "
            "pip install 'sparkflow-connectors[metrics]'"
        ) from e
    return prometheus_client


class LagListener(StreamingQueryListener):
    """Logs and keeps the lag of every source that publishes it; optionally sets Prometheus gauges.

    ``prometheus``: ``True`` for prometheus_client's default registry, a ``CollectorRegistry``, or
    ``False``/``None`` for none. ``log_level``: the level of the per-batch line.
    """

    def __init__(
        self, prometheus: Any = None, keep: int = DEFAULT_KEEP, log_level: int = logging.INFO
    ) -> None:
        self._lock = threading.Lock()
        self._samples: deque[LagSample] = deque(maxlen=keep)
        self._log_level = log_level
        self._registry: Any = None
        self._gauges: dict[str, Any] = {}
        if prometheus:
            client = _prometheus()
            self._registry = client.REGISTRY if prometheus is True else prometheus
            labels = ["query", "source"]
            for name, doc in _GAUGES.items():
                snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
                self._gauges[name] = client.Gauge(
                    "sparkflow_source_lag_" + snake, doc, labels, registry=self._registry
                )
            self._gauges["backlog"] = client.Gauge(
                "sparkflow_source_backlog", "1 while in backlog", labels, registry=self._registry
            )

    @property
    def samples(self) -> list[LagSample]:
        """The kept samples, oldest first."""
        with self._lock:
            return list(self._samples)

    def serve(self, port: int, addr: str = "127.0.0.1") -> Any:
        """Serve this listener's registry over HTTP for Prometheus to scrape (``/metrics``, a daemon
        thread); returns the server, whose ``shutdown()`` stops it."""
        if self._registry is None:
            raise ConnectorError("LagListener.serve needs prometheus=True or a registry")
        server, _thread = _prometheus().start_http_server(port, addr=addr, registry=self._registry)
        return server

    @override
    def onQueryStarted(self, event: Any) -> None:
        pass

    @override
    def onQueryProgress(self, event: Any) -> None:
        for sample in lag_samples(event.progress):
            with self._lock:
                self._samples.append(sample)
            LOG.log(
                self._log_level,
                "query %s batch %d %s: %d rows, lag %s records, %s bytes, %s ms, %s splits pending, "
                "worst split %s, backlog %s",
                sample.query_name or sample.query_id,
                sample.batch_id,
                sample.source,
                sample.num_input_rows,
                sample.lag_records,
                sample.lag_bytes,
                sample.lag_ms,
                sample.pending_splits,
                sample.worst_split,
                sample.backlog,
            )
            if self._gauges:
                self._export(sample)

    def _export(self, sample: LagSample) -> None:
        labels = (sample.query_name or sample.query_id, sample.source)
        values = {
            "records": sample.lag_records,
            "bytes": sample.lag_bytes,
            "ms": sample.lag_ms,
            "pendingSplits": sample.pending_splits,
            "backlog": int(sample.backlog),
        }
        for name, value in values.items():
            if value is not None:
                self._gauges[name].labels(*labels).set(value)

    @override
    def onQueryIdle(self, event: Any) -> None:
        pass

    @override
    def onQueryTerminated(self, event: Any) -> None:
        pass
