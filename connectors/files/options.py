"""Options of ``files-unified``, parsed once into a frozen ``FileSourceOptions``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions
from connectors.files.listing import is_glob, local_path

MIB = 1024 * 1024
DEFAULT_SPLIT_SIZE_BYTES = 32 * MIB
DEFAULT_MAX_PARTITION_BYTES = 128 * MIB
DEFAULT_DISCOVERY_INTERVAL_MS = 1000
DEFAULT_MAX_FILE_AGE_MS = 7 * 24 * 3_600_000
"""Spark's file source default for ``maxFileAge`` (7 days)."""
_DURATION_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
FILE_COLUMN = "_file"
OFFSET_COLUMN = "_offset"


class FileFormat(Enum):
    """The supported formats."""

    TEXT = "text"
    JSONL = "jsonl"
    CSV = "csv"
    PARQUET = "parquet"


class CleanSource(Enum):
    """What happens to a file once a committed micro-batch has read it (Spark's ``cleanSource``)."""

    OFF = "off"
    ARCHIVE = "archive"
    DELETE = "delete"


class ParseMode(Enum):
    """What a malformed line does (Spark's ``mode`` option)."""

    FAILFAST = "FAILFAST"
    DROPMALFORMED = "DROPMALFORMED"
    PERMISSIVE = "PERMISSIVE"


@dataclass(frozen=True, slots=True)
class CsvOptions:
    """The CSV dialect, named as Spark's csv source names it."""

    header: bool = False
    sep: str = ","
    quote: str | None = '"'
    escape: str | None = None
    null_value: str = ""


_KNOWN = {
    "path": "a directory, a file or a glob",
    "format": "text | jsonl | csv | parquet",
    "splitsizebytes": "a positive integer",
    "maxpartitionbytes": "a positive integer",
    "recursive": "true | false",
    "continuous": "true | false",
    "discoveryintervalms": "a positive integer",
    "maxfilespertrigger": "a positive integer",
    "maxbytespertrigger": "a positive integer",
    "includemetadata": "true | false",
    "mode": "FAILFAST | DROPMALFORMED | PERMISSIVE",
    "columnnameofcorruptrecord": "a column name",
    "header": "true | false",
    "sep": "one character",
    "delimiter": "one character",
    "quote": "one character or empty",
    "escape": "one character",
    "nullvalue": "a string",
    "arrowbatchrows": "a positive integer",
    "filterpushdown": "true | false (batch reads; see docs/files.md)",
    "maxfileage": "a duration such as 7d, 12h, 30m, 15s or milliseconds",
    "latestfirst": "true | false",
    "cleansource": "off | archive | delete",
    "sourcearchivedir": "a directory outside path (with cleanSource=archive)",
}
_DISPLAY = {
    "splitsizebytes": "splitSizeBytes",
    "maxpartitionbytes": "maxPartitionBytes",
    "discoveryintervalms": "discoveryIntervalMs",
    "maxfilespertrigger": "maxFilesPerTrigger",
    "maxbytespertrigger": "maxBytesPerTrigger",
    "includemetadata": "includeMetadata",
    "columnnameofcorruptrecord": "columnNameOfCorruptRecord",
    "nullvalue": "nullValue",
    "arrowbatchrows": "arrowBatchRows",
    "filterpushdown": "filterPushdown",
    "maxfileage": "maxFileAge",
    "latestfirst": "latestFirst",
    "cleansource": "cleanSource",
    "sourcearchivedir": "sourceArchiveDir",
}
KNOWN_OPTIONS = sorted(_DISPLAY.get(k, k) for k in _KNOWN)
"""Every option name ``files-unified`` accepts."""


def _name(key: str) -> str:
    return _DISPLAY.get(key, key)


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    text = raw.strip().lower()
    if text not in ("true", "false"):
        raise InvalidOptionError(_name(key), raw, "true or false")
    return text == "true"


def _positive(options: Mapping[str, str], key: str, default: int | None) -> int | None:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise InvalidOptionError(_name(key), raw, "a positive integer") from None
    if value < 1:
        raise InvalidOptionError(_name(key), raw, "a positive integer")
    return value


def _char(options: Mapping[str, str], key: str, default: str | None, allow_empty: bool) -> str | None:
    raw = options.get(key)
    if raw is None:
        return default
    if raw == "" and allow_empty:
        return None
    if len(raw) != 1:
        raise InvalidOptionError(
            _name(key), raw, "exactly one character" + (" or empty" if allow_empty else "")
        )
    return raw


def _duration_ms(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    text = raw.strip().lower()
    for unit in sorted(_DURATION_UNITS_MS, key=len, reverse=True):
        number = text[: -len(unit)].strip()
        if text.endswith(unit) and number.isdigit():
            return int(number) * _DURATION_UNITS_MS[unit]
    if text.isdigit():
        return int(text)
    raise InvalidOptionError(_name(key), raw, "a duration such as 7d, 12h, 30m, 15s, 500ms or milliseconds")


def _clean_source(options: Mapping[str, str], path: str) -> tuple[CleanSource, str | None]:
    raw = options.get("cleansource", "off")
    try:
        mode = CleanSource(raw.strip().lower())
    except ValueError:
        raise InvalidOptionError("cleanSource", raw, "one of off, archive, delete") from None
    archive = options.get("sourcearchivedir")
    if mode is not CleanSource.ARCHIVE:
        if archive is not None:
            raise InvalidOptionError("sourceArchiveDir", archive, "unset unless cleanSource=archive")
        return mode, None
    if archive is None or not archive.strip():
        raise InvalidOptionError("sourceArchiveDir", archive, "a directory, required by cleanSource=archive")
    archive_dir = os.path.abspath(local_path(archive.strip()))
    root = os.path.abspath(_glob_root(local_path(path.strip())))
    if os.path.commonpath([archive_dir, root]) == root:
        raise InvalidOptionError(
            "sourceArchiveDir",
            archive,
            f"a directory outside the source directory {root} (archived files would be read again)",
        )
    return mode, archive_dir


def _glob_root(path: str) -> str:
    """The directory part of ``path`` before its first glob character."""
    parts: list[str] = []
    for part in path.split(os.sep):
        if is_glob(part):
            break
        parts.append(part)
    return os.sep.join(parts) or os.sep


@dataclass(frozen=True, slots=True)
class FileSourceOptions:
    """Everything ``files-unified`` reads from its options (see docs/files.md)."""

    path: str
    format: FileFormat
    split_size_bytes: int = DEFAULT_SPLIT_SIZE_BYTES
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES
    recursive: bool = False
    continuous: bool = False
    discovery_interval_ms: int = DEFAULT_DISCOVERY_INTERVAL_MS
    max_files_per_trigger: int | None = None
    max_bytes_per_trigger: int | None = None
    include_metadata: bool = False
    arrow_batch_rows: int | None = None
    mode: ParseMode = ParseMode.FAILFAST
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    csv: CsvOptions = CsvOptions()
    max_file_age_ms: int = DEFAULT_MAX_FILE_AGE_MS
    latest_first: bool = False
    clean_source: CleanSource = CleanSource.OFF
    source_archive_dir: str | None = None

    @property
    def file_age_limit_ms(self) -> int | None:
        """``maxFileAge`` in force: none with ``latestFirst`` and ``maxFilesPerTrigger`` (as Spark)."""
        if self.latest_first and self.max_files_per_trigger is not None:
            return None
        return self.max_file_age_ms

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> FileSourceOptions:
        """Parse and validate; raises ``InvalidOptionError`` naming the option, value and valid choices."""
        lowered: dict[str, str] = {}
        for key, value in options.items():
            low = key.lower()
            if low not in _KNOWN:
                raise InvalidOptionError(key, value, f"one of the options {KNOWN_OPTIONS}")
            lowered[low] = value
        path = lowered.get("path")
        if path is None or not path.strip():
            raise InvalidOptionError(
                "path", path, "a directory, a file or a glob (load(path) or option('path', ...))"
            )
        fmt_raw = lowered.get("format")
        try:
            fmt = FileFormat((fmt_raw or "").strip().lower())
        except ValueError:
            raise InvalidOptionError("format", fmt_raw, "one of text, jsonl, csv, parquet") from None
        mode_raw = lowered.get("mode", "FAILFAST")
        try:
            mode = ParseMode(mode_raw.strip().upper())
        except ValueError:
            raise InvalidOptionError("mode", mode_raw, "one of FAILFAST, DROPMALFORMED, PERMISSIVE") from None
        if "sep" in lowered and "delimiter" in lowered and lowered["sep"] != lowered["delimiter"]:
            raise InvalidOptionError(
                "delimiter", lowered["delimiter"], f"the same as sep ({lowered['sep']!r}) or unset"
            )
        sep_key = "sep" if "sep" in lowered else "delimiter"
        csv = CsvOptions(
            header=_bool(lowered, "header", False),
            sep=_char(lowered, sep_key, ",", allow_empty=False) or ",",
            quote=_char(lowered, "quote", '"', allow_empty=True),
            escape=_char(lowered, "escape", None, allow_empty=True),
            null_value=lowered.get("nullvalue", ""),
        )
        corrupt = lowered.get("columnnameofcorruptrecord", DEFAULT_CORRUPT_COLUMN)
        if not corrupt.strip():
            raise InvalidOptionError("columnNameOfCorruptRecord", corrupt, "a non-empty column name")
        split_size = _positive(lowered, "splitsizebytes", DEFAULT_SPLIT_SIZE_BYTES)
        max_partition = _positive(lowered, "maxpartitionbytes", DEFAULT_MAX_PARTITION_BYTES)
        interval = _positive(lowered, "discoveryintervalms", DEFAULT_DISCOVERY_INTERVAL_MS)
        assert split_size is not None and max_partition is not None and interval is not None
        clean, archive_dir = _clean_source(lowered, path)
        return cls(
            path=path.strip(),
            format=fmt,
            split_size_bytes=split_size,
            max_partition_bytes=max_partition,
            recursive=_bool(lowered, "recursive", False),
            continuous=_bool(lowered, "continuous", False),
            discovery_interval_ms=interval,
            max_files_per_trigger=_positive(lowered, "maxfilespertrigger", None),
            max_bytes_per_trigger=_positive(lowered, "maxbytespertrigger", None),
            include_metadata=_bool(lowered, "includemetadata", False),
            arrow_batch_rows=_positive(lowered, "arrowbatchrows", None),
            mode=mode,
            corrupt_column=corrupt,
            csv=csv,
            max_file_age_ms=_duration_ms(lowered, "maxfileage", DEFAULT_MAX_FILE_AGE_MS),
            latest_first=_bool(lowered, "latestfirst", False),
            clean_source=clean,
            source_archive_dir=archive_dir,
        )

    def read_limits(self) -> ReadLimitOptions:
        """Admission control for streaming queries."""
        return ReadLimitOptions(max_files=self.max_files_per_trigger, max_bytes=self.max_bytes_per_trigger)
