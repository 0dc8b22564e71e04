"""Options of ``format("pravega")``, parsed once into frozen objects (secrets never shown)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions, parse_duration_ms, parse_positive_int
from connectors.formats.format_options import is_format_option
from connectors.formats.writer_schemas import WriterSchema
from connectors.pravega.controller_client import (
    DEFAULT_NETWORK_TIMEOUT_MS,
    DEFAULT_READ_TIMEOUT_MS,
    ConnectionSettings,
)
from connectors.pravega.event_time import CutFrom, EventTimeEncoding, parse_cut_from, parse_encoding
from connectors.pravega.positions import CutKind, StreamCutSpec, StreamId, parse_stream_cut

__all__ = [
    "PARSE_MODE_OPTION",
    "PravegaSourceOptions",
    "PravegaSinkOptions",
    "ReadMode",
    "connection_settings",
]

PARSE_MODE_OPTION = "parsemode"
"""``mode`` is the read mode here, so the record formats' parse mode is ``parseMode``."""

DEFAULT_DISCOVERY_INTERVAL_MS = 1000

_CONNECTION_KEYS = {
    "controller",
    "tls_enabled",
    "trust_store",
    "auth_enabled",
    "username",
    "password",
    "auth_token",
    "networktimeoutms",
    "readtimeoutms",
}
_SOURCE_KEYS = _CONNECTION_KEYS | {
    "scope",
    "stream",
    "start_stream_cut",
    "end_stream_cut",
    "maxeventspertrigger",
    "maxbytespertrigger",
    "failondataloss",
    "discovery_interval_ms",
    "mode",
    "reader_group",
    "allow_create_scope",
    "allow_create_stream",
    "arrowbatchrows",
    "path",
    "eventtime.encoding",
    "eventtime.cutfrom",
}
_SINK_KEYS = _CONNECTION_KEYS | {
    "scope",
    "stream",
    "exactly_once",
    "allow_create_scope",
    "allow_create_stream",
    "segments",
    "transaction_log_dir",
    "path",
    "checkpointlocation",
    "notetime.column",
    "notetime.writerid",
}


class ReadMode(Enum):
    """How a read is split: by segment ranges (Spark, exactly once) or by reader-group readers."""

    SEGMENTS = "segments"
    READER_GROUP = "reader_group"


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in options.items()}


def _transaction_log_dir(options: Mapping[str, str]) -> str | None:
    from connectors.pravega.txn_log import local_directory

    explicit = options.get("transaction_log_dir")
    if explicit:
        return str(local_directory(explicit, "transaction_log_dir"))
    checkpoint = options.get("checkpointlocation")
    if checkpoint and _bool(options, "exactly_once", False):
        return str(local_directory(checkpoint, "checkpointLocation") / "sinks" / "pravega")
    return None


def _non_blank(options: Mapping[str, str], key: str) -> str | None:
    raw = options.get(key.lower())
    if raw is None:
        return None
    if not raw.strip():
        raise InvalidOptionError(key, raw, "a non-empty name")
    return raw.strip()


def _check_known(options: Mapping[str, str], known: set[str], formats: bool = False) -> None:
    """Refuse unknown options (``formats``: the record-format options are known too)."""
    for key, value in options.items():
        if key.lower() not in known and not (formats and is_format_option(key.lower(), PARSE_MODE_OPTION)):
            shown = "<hidden>" if key.lower() in ("password", "auth_token") else value
            raise InvalidOptionError(key, shown, f"one of the options {sorted(known)}")


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise InvalidOptionError(key, raw, "true or false")
    return value == "true"


def _millis(options: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    raw = options.get(key.lower())
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise InvalidOptionError(key, raw, f"a whole number of milliseconds >= {minimum}")
    return value


def connection_settings(options: Mapping[str, str]) -> ConnectionSettings:
    """The controller address and security settings (lower-cased keys)."""
    controller = options.get("controller")
    if not controller or not controller.strip():
        raise InvalidOptionError("controller", controller, "the controller URI, e.g. tcp://127.0.0.1:9090")
    controller = controller.strip()
    tls_default = controller.startswith("tls://")
    if not controller.startswith(("tcp://", "tls://")) or ":" not in controller[6:]:
        raise InvalidOptionError("controller", controller, "a URI tcp://host:port or tls://host:port")
    auth = _bool(options, "auth_enabled", False)
    username = options.get("username")
    password = options.get("password")
    token = options.get("auth_token")
    if auth and username is None and token is None:
        raise InvalidOptionError(
            "auth_enabled", "true", "username and password, or auth_token, with auth_enabled"
        )
    return ConnectionSettings(
        controller=controller,
        tls_enabled=_bool(options, "tls_enabled", tls_default),
        trust_store=options.get("trust_store"),
        auth_enabled=auth,
        username=username,
        password=password,
        auth_token=token,
        network_timeout_ms=_millis(options, "networkTimeoutMs", DEFAULT_NETWORK_TIMEOUT_MS, 0),
        read_timeout_ms=_millis(options, "readTimeoutMs", DEFAULT_READ_TIMEOUT_MS, 1),
    )


def _streams(options: Mapping[str, str]) -> tuple[StreamId, ...]:
    raw = options.get("stream")
    scope = (options.get("scope") or "").strip()
    expected = "one or more stream names separated by commas, each 'name' (with option scope) or 'scope/name'"
    if raw is None or not raw.strip():
        raise InvalidOptionError("stream", raw, expected)
    streams: list[StreamId] = []
    for item in (s.strip() for s in raw.split(",")):
        if not item:
            raise InvalidOptionError("stream", raw, expected)
        if "/" in item:
            sc, _, st = item.partition("/")
            if not sc or not st or "/" in st:
                raise InvalidOptionError("stream", raw, expected)
        else:
            if not scope:
                raise InvalidOptionError("scope", options.get("scope"), f"a scope name for stream '{item}'")
            sc, st = scope, item
        if (sc, st) in streams:
            raise InvalidOptionError("stream", raw, expected + " (without repeats)")
        streams.append((sc, st))
    return tuple(streams)


def _check_cut_streams(option: str, raw: str, spec: StreamCutSpec, streams: tuple[StreamId, ...]) -> None:
    if spec.kind is not CutKind.EXPLICIT:
        return
    named = set(spec.cuts)
    if named != set(streams):
        raise InvalidOptionError(
            option,
            raw,
            f"a stream cut for exactly the streams read: {sorted(f'{a}/{b}' for a, b in streams)}",
        )


@dataclass(frozen=True, slots=True)
class PravegaSourceOptions:
    """Everything a Pravega read needs (``repr`` hides credentials)."""

    connection: ConnectionSettings
    streams: tuple[StreamId, ...]
    start: StreamCutSpec
    end: StreamCutSpec
    streaming: bool
    fail_on_data_loss: bool = True
    max_events_per_trigger: int | None = None
    max_bytes_per_trigger: int | None = None
    discovery_interval_ms: int = DEFAULT_DISCOVERY_INTERVAL_MS
    mode: ReadMode = ReadMode.SEGMENTS
    reader_group: str | None = None
    event_time_encoding: EventTimeEncoding = EventTimeEncoding.JSON
    cut_from: CutFrom = CutFrom.EVENTS

    @property
    def bounded(self) -> bool:
        """Whether reading ends at an end stream cut."""
        return self.end.kind is not CutKind.UNBOUNDED

    @classmethod
    def parse(cls, options: Mapping[str, str], streaming: bool) -> PravegaSourceOptions:
        """Parse and validate; raises ``InvalidOptionError`` naming the option."""
        _check_known(options, _SOURCE_KEYS, formats=True)
        o = _lower(options)
        connection = connection_settings(o)
        streams = _streams(o)
        raw_start = o.get("start_stream_cut", "earliest")
        start = parse_stream_cut("start_stream_cut", raw_start, ("earliest", "latest"))
        _check_cut_streams("start_stream_cut", raw_start, start, streams)
        raw_end = o.get("end_stream_cut", "unbounded" if streaming else "latest")
        end = parse_stream_cut("end_stream_cut", raw_end, ("latest", "unbounded"))
        _check_cut_streams("end_stream_cut", raw_end, end, streams)
        if not streaming and end.kind is CutKind.UNBOUNDED:
            raise InvalidOptionError(
                "end_stream_cut",
                raw_end,
                "latest or a stream cut for batch reads (unbounded needs readStream)",
            )
        if start.kind is CutKind.EXPLICIT and end.kind is CutKind.EXPLICIT:
            for sid, cut in start.cuts.items():
                for seg, off in cut.items():
                    if seg in end.cuts[sid] and end.cuts[sid][seg] < off:
                        raise InvalidOptionError(
                            "end_stream_cut", raw_end, f"offsets at or after start_stream_cut (segment {seg})"
                        )
        mode_raw = o.get("mode", "segments").strip().lower()
        try:
            mode = ReadMode(mode_raw)
        except ValueError:
            raise InvalidOptionError("mode", o.get("mode"), "segments or reader_group") from None
        interval = parse_duration_ms(o, "discovery_interval_ms")
        return cls(
            connection=connection,
            streams=streams,
            start=start,
            end=end,
            streaming=streaming,
            fail_on_data_loss=_bool(o, "failondataloss", True),
            max_events_per_trigger=parse_positive_int(o, "maxEventsPerTrigger"),
            max_bytes_per_trigger=parse_positive_int(o, "maxBytesPerTrigger"),
            discovery_interval_ms=DEFAULT_DISCOVERY_INTERVAL_MS if interval is None else max(1, interval),
            mode=mode,
            reader_group=o.get("reader_group"),
            event_time_encoding=parse_encoding(o),
            cut_from=parse_cut_from(o),
        )

    def read_limits(self) -> ReadLimitOptions:
        """Admission control for streaming queries."""
        return ReadLimitOptions(max_records=self.max_events_per_trigger, max_bytes=self.max_bytes_per_trigger)


@dataclass(frozen=True, slots=True)
class PravegaSinkOptions:
    """Options of ``df.write.format("pravega")``."""

    connection: ConnectionSettings
    scope: str
    stream: str
    exactly_once: bool = False
    allow_create_scope: bool = False
    allow_create_stream: bool = False
    segments: int = 1
    transaction_log_dir: str | None = None
    """Where a streaming ``exactly_once`` sink records each batch's transactions (``txn_log``)."""
    note_time_column: str | None = None
    """``noteTime.column``: the column whose largest value each job or micro-batch notes as writer time."""
    note_time_writer_id: str | None = None
    """``noteTime.writerId``: the writer id the times are noted under (default: see the sink)."""
    checkpoint_location: str | None = None
    writer_schema: WriterSchema | None = None
    """``valueFormat``: the schema the ``event`` struct column is encoded with (fixed on the driver)."""

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> PravegaSinkOptions:
        """Parse and validate; raises ``InvalidOptionError`` naming the option."""
        _check_known(options, _SINK_KEYS, formats=True)
        o = _lower(options)
        streams = _streams(o)
        if len(streams) != 1:
            raise InvalidOptionError("stream", o.get("stream"), "exactly one stream for writing")
        segments = parse_positive_int(o, "segments")
        return cls(
            connection=connection_settings(o),
            scope=streams[0][0],
            stream=streams[0][1],
            exactly_once=_bool(o, "exactly_once", False),
            allow_create_scope=_bool(o, "allow_create_scope", False),
            allow_create_stream=_bool(o, "allow_create_stream", False),
            segments=segments or 1,
            transaction_log_dir=_transaction_log_dir(o),
            note_time_column=_non_blank(o, "noteTime.column"),
            note_time_writer_id=_non_blank(o, "noteTime.writerId"),
            checkpoint_location=o.get("checkpointlocation"),
        )
