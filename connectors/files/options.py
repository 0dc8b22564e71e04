"""Options of ``files-unified``, parsed once into a frozen ``FileSourceOptions``."""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions
from connectors.files.charsets import CHARSETS, UTF8, encode_separator, python_codec
from connectors.files.formats.json_lenient import Leniency
from connectors.files.listing import NameFilter, is_glob, local_path, name_glob
from connectors.files.modified_time_filter import EXPECTED as TIMESTAMP_EXPECTED
from connectors.files.modified_time_filter import ModifiedTimeFilter, parse_timestamp
from connectors.files.time_zone import valid_time_zone

MIB = 1024 * 1024
DEFAULT_SPLIT_SIZE_BYTES = 32 * MIB
DEFAULT_MAX_PARTITION_BYTES = 128 * MIB
OPEN_COST_BYTES = 4 * MIB
"""What opening a range costs when small ranges are packed (``spark.sql.files.openCostInBytes``)."""
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
    """``None``: no quoting (the option set to the empty string)."""
    escape: str | None = "\\"
    """Spark's default; ``None``: no escape (the option set to the empty string)."""
    escape_escape: str | None = None
    """``charToEscapeQuoteEscaping``; unset: the escape itself (none when escape and quote are one)."""
    null_value: str = ""
    empty_value: str = ""
    ignore_leading_white_space: bool = False
    ignore_trailing_white_space: bool = False
    unescaped_quote_handling: str = "STOP_AT_DELIMITER"
    time_zone: str | None = None
    """``timeZone`` (also used by jsonl): naive timestamps are read in it; unset: the session's zone."""


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
    "escape": "one character or empty",
    "chartoescapequoteescaping": "one character or empty",
    "nullvalue": "a string",
    "timezone": "a region such as America/New_York, UTC, or an offset such as +01:00",
    "emptyvalue": "a string",
    "ignoreleadingwhitespace": "true | false",
    "ignoretrailingwhitespace": "true | false",
    "unescapedquotehandling": (
        "STOP_AT_DELIMITER | STOP_AT_CLOSING_QUOTE | BACK_TO_DELIMITER | SKIP_VALUE | RAISE_ERROR"
    ),
    "arrowbatchrows": "a positive integer",
    "filterpushdown": "true | false (batch reads; see docs/files.md)",
    "maxfileage": "a duration such as 7d, 12h, 30m, 15s or milliseconds",
    "latestfirst": "true | false",
    "cleansource": "off | archive | delete",
    "sourcearchivedir": "a directory outside path (with cleanSource=archive)",
    "multiline": "true | false (jsonl: each file is one JSON document; csv: quoted values may span lines)",
    "pathglobfilter": "a glob on file names: *, ?, [abc], [!abc], {a,b}",
    "recursivefilelookup": "true | false (read sub-directories, no partition columns)",
    "ignoremissingfiles": "true | false (skip files deleted after they were listed)",
    "ignorecorruptfiles": "true | false (keep what a corrupt file gave before its error, skip the rest)",
    "modifiedbefore": "a timestamp such as 2024-06-01T13:00:00 (batch reads)",
    "modifiedafter": "a timestamp such as 2024-06-01T13:00:00 (batch reads)",
    "linesep": "a non-empty string that ends each line (csv: 1 or 2 characters); unset: \\n, \\r\\n or \\r",
    "encoding": "a charset: " + ", ".join(CHARSETS) + " (text: any charset, used for lineSep only)",
    "charset": "as encoding (json, csv)",
    "inferschema": "true | false (csv: infer column types; other formats: no effect)",
    "samplingratio": "a number above 0 (json, csv inference: about this share of the lines; 1 or more: all)",
    "mergeschema": "true | false (parquet: the schema merged from every file's footer)",
    "allowsinglequotes": "true | false (json: names and strings in single quotes, as Spark's default)",
    "allowcomments": "true | false (json: /* */ and // comments)",
    "allowunquotedfieldnames": "true | false (json: names without quotes)",
    "allownumericleadingzeros": "true | false (json: 007 reads as 7)",
    "allowbackslashescapinganycharacter": "true | false (json: \\q reads as q)",
    "allowunquotedcontrolchars": "true | false (json: raw control characters inside strings)",
    "prefersdecimal": "true | false (json inference: numbers with a fraction as decimals)",
    "primitivesasstring": "true | false (json inference: numbers and booleans as strings)",
    "dropfieldifallnull": "true | false (json inference: no column for fields that are always null)",
    "allownonnumericnumbers": "true | false (json: NaN, Infinity, +INF, -INF as numbers)",
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
    "timezone": "timeZone",
    "chartoescapequoteescaping": "charToEscapeQuoteEscaping",
    "emptyvalue": "emptyValue",
    "ignoreleadingwhitespace": "ignoreLeadingWhiteSpace",
    "ignoretrailingwhitespace": "ignoreTrailingWhiteSpace",
    "unescapedquotehandling": "unescapedQuoteHandling",
    "arrowbatchrows": "arrowBatchRows",
    "filterpushdown": "filterPushdown",
    "maxfileage": "maxFileAge",
    "latestfirst": "latestFirst",
    "cleansource": "cleanSource",
    "sourcearchivedir": "sourceArchiveDir",
    "multiline": "multiLine",
    "pathglobfilter": "pathGlobFilter",
    "recursivefilelookup": "recursiveFileLookup",
    "ignoremissingfiles": "ignoreMissingFiles",
    "ignorecorruptfiles": "ignoreCorruptFiles",
    "modifiedbefore": "modifiedBefore",
    "modifiedafter": "modifiedAfter",
    "linesep": "lineSep",
    "inferschema": "inferSchema",
    "samplingratio": "samplingRatio",
    "mergeschema": "mergeSchema",
    "allowsinglequotes": "allowSingleQuotes",
    "allowcomments": "allowComments",
    "allowunquotedfieldnames": "allowUnquotedFieldNames",
    "allownumericleadingzeros": "allowNumericLeadingZeros",
    "allowbackslashescapinganycharacter": "allowBackslashEscapingAnyCharacter",
    "allowunquotedcontrolchars": "allowUnquotedControlChars",
    "prefersdecimal": "prefersDecimal",
    "primitivesasstring": "primitivesAsString",
    "dropfieldifallnull": "dropFieldIfAllNull",
    "allownonnumericnumbers": "allowNonNumericNumbers",
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


UNESCAPED_QUOTE_HANDLING = (
    "STOP_AT_DELIMITER",
    "STOP_AT_CLOSING_QUOTE",
    "BACK_TO_DELIMITER",
    "SKIP_VALUE",
    "RAISE_ERROR",
)
"""Spark's ``unescapedQuoteHandling`` values; the first is the default."""


def _time_zone(options: Mapping[str, str]) -> str | None:
    raw = options.get("timezone")
    if raw is None:
        return None
    if not valid_time_zone(raw.strip()):
        raise InvalidOptionError(
            "timeZone", raw, "a region such as America/New_York, UTC, or an offset such as +01:00"
        )
    return raw.strip()


def _choice(options: Mapping[str, str], key: str, choices: tuple[str, ...]) -> str:
    raw = options.get(key)
    if raw is None:
        return choices[0]
    if raw.strip().upper() not in choices:
        raise InvalidOptionError(_name(key), raw, "one of " + ", ".join(choices))
    return raw.strip().upper()


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


_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)")


def _sampling_ratio(raw: str | None) -> float:
    """``samplingRatio`` as Spark reads it (Java's ``Double.parseDouble``, then above 0)."""
    if raw is None:
        return 1.0
    text = raw.strip(" \t\n\r\f\v")
    if not _JAVA_DOUBLE.fullmatch(text) or not float(text.rstrip("fFdD")) > 0:
        raise InvalidOptionError("samplingRatio", raw, "a number above 0 (1 or more: every line)")
    return float(text.rstrip("fFdD"))


def _line_sep_and_charset(
    options: Mapping[str, str], fmt: FileFormat, multi_line: bool
) -> tuple[str | None, str]:
    """``lineSep`` and the charset, checked as Spark 4 checks them (parquet ignores both, as Spark's)."""
    if fmt is FileFormat.PARQUET:
        return None, UTF8
    line_sep = options.get("linesep")
    if line_sep is not None and not line_sep:
        raise InvalidOptionError("lineSep", line_sep, "a non-empty string")
    if line_sep is not None and fmt is FileFormat.CSV and len(line_sep) > 2:
        raise InvalidOptionError("lineSep", line_sep, "1 or 2 characters for csv (as Spark)")
    if fmt is FileFormat.TEXT:  # Spark's text source: `encoding` only encodes lineSep; values are UTF-8
        enc = options.get("encoding")
        if enc is None or line_sep is None:
            return line_sep, UTF8
        try:
            codecs.lookup(python_codec(enc))
            encode_separator(line_sep, enc)
        except (LookupError, UnicodeError):
            raise InvalidOptionError(
                "encoding", enc, "a charset name such as " + ", ".join(CHARSETS)
            ) from None
        return line_sep, enc.lower()
    key = "encoding" if "encoding" in options else "charset"  # as Spark: encoding first
    enc = options.get(key)
    if enc is None:
        return line_sep, UTF8
    charset = enc.lower()
    if charset not in CHARSETS:
        raise InvalidOptionError(_name(key), enc, "one of " + ", ".join(CHARSETS) + " (any case)")
    if fmt is FileFormat.JSONL and not multi_line:
        if charset in ("utf-16", "utf-32"):
            raise InvalidOptionError(
                _name(key),
                enc,
                "a charset with a byte order (utf-16le, utf-16be, ...) unless multiLine=true: as Spark, "
                "UTF-16 and UTF-32 need a byte-order mark, which only the first line has",
            )
        if charset != UTF8 and line_sep is None:
            raise InvalidOptionError(
                _name(key),
                enc,
                f"utf-8 unless lineSep is set too (Spark requires lineSep for {enc} JSON lines)",
            )
    return line_sep, charset


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
    multi_line: bool = False
    """``multiLine``: a jsonl file is one JSON document (an object, or an array of objects)."""
    path_glob_filter: str | None = None
    """``pathGlobFilter``: only files whose name matches this glob (Hadoop's syntax)."""
    recursive_file_lookup: bool = False
    """``recursiveFileLookup``: every file below ``path``, with no partition discovery."""
    ignore_missing_files: bool = False
    """``ignoreMissingFiles``: a file deleted between discovery and its read gives no rows."""
    ignore_corrupt_files: bool = False
    """``ignoreCorruptFiles``: a file that cannot be decompressed or is no Parquet gives the rows read
    before the error and no error (see docs/files.md)."""
    modified: ModifiedTimeFilter = ModifiedTimeFilter()
    """``modifiedBefore`` / ``modifiedAfter`` (batch reads; see modified_time_filter.py)."""
    line_sep: str | None = None
    """``lineSep``: what ends a line (text, jsonl lines, csv); ``None``: ``\\n``, ``\\r\\n`` or ``\\r``."""
    charset: str = UTF8
    """``encoding`` / ``charset`` (json, csv: the lines' charset; text: only ``lineSep``'s), lowercase."""
    infer_types: bool = False
    """``inferSchema`` (csv): infer column types (see csv_inference.py) instead of all strings."""
    sampling_ratio_option: str | None = None
    """``samplingRatio`` as given (json, csv), checked by ``sampling_ratio`` when inference reads it."""
    merge_schema: bool = False
    """``mergeSchema`` (parquet): infer the schema merged from every file's, not the oldest file's."""
    json_leniency: Leniency = Leniency()
    """The json parser's ``allow...`` options (json_lenient.py)."""
    prefers_decimal: bool = False
    """``prefersDecimal`` (json inference): a number with a fraction or exponent is a decimal."""
    primitives_as_string: bool = False
    """``primitivesAsString`` (json inference): numbers and booleans are strings."""
    drop_field_if_all_null: bool = False
    """``dropFieldIfAllNull`` (json inference): no column for a field that is always null."""

    @property
    def sampling_ratio(self) -> float:
        """``samplingRatio`` as a number (1.0 when not given), checked here, when schema inference
        first reads it: a read with a schema given never does, and Spark accepts any value then."""
        return _sampling_ratio(self.sampling_ratio_option)

    @property
    def custom_lines(self) -> bool:
        """Whether lines end at ``lineSep`` or decode from another charset than UTF-8 (see line_framing.py):
        then each file is read whole and its lines parsed one by one."""
        if self.format is FileFormat.PARQUET or (self.multi_line and self.format is not FileFormat.TEXT):
            return False
        return self.line_sep is not None or (self.format is not FileFormat.TEXT and self.charset != UTF8)

    @property
    def lists_recursively(self) -> bool:
        """Whether sub-directories are read (``recursive`` or ``recursiveFileLookup``)."""
        return self.recursive or self.recursive_file_lookup

    @property
    def discovers_partitions(self) -> bool:
        """Whether ``key=value`` directories give columns: ``recursive``, unless ``recursiveFileLookup``
        turns partition discovery off (as in Spark)."""
        return self.recursive and not self.recursive_file_lookup

    def name_filter(self) -> NameFilter | None:
        """The ``pathGlobFilter`` test of a file name, or ``None`` when every name is read."""
        if self.path_glob_filter is None:
            return None
        return name_glob(self.path_glob_filter).fullmatch  # type: ignore[return-value]

    @property
    def whole_files(self) -> bool:
        """Whether each file is read whole, never cut: one record source (``multiLine`` jsonl, csv), or
        lines found by ``lineSep`` or another charset (``custom_lines``)."""
        documents = self.format in (FileFormat.JSONL, FileFormat.CSV)
        return (self.multi_line and documents) or self.custom_lines

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
            escape=_char(lowered, "escape", "\\", allow_empty=True),
            escape_escape=_char(lowered, "chartoescapequoteescaping", None, allow_empty=True)
            or ("\0" if lowered.get("chartoescapequoteescaping") == "" else None),
            null_value=lowered.get("nullvalue", ""),
            empty_value=lowered.get("emptyvalue", ""),
            ignore_leading_white_space=_bool(lowered, "ignoreleadingwhitespace", False),
            ignore_trailing_white_space=_bool(lowered, "ignoretrailingwhitespace", False),
            unescaped_quote_handling=_choice(lowered, "unescapedquotehandling", UNESCAPED_QUOTE_HANDLING),
            time_zone=_time_zone(lowered),
        )
        corrupt = lowered.get("columnnameofcorruptrecord", DEFAULT_CORRUPT_COLUMN)
        if not corrupt.strip():
            raise InvalidOptionError("columnNameOfCorruptRecord", corrupt, "a non-empty column name")
        split_size = _positive(lowered, "splitsizebytes", DEFAULT_SPLIT_SIZE_BYTES)
        max_partition = _positive(lowered, "maxpartitionbytes", DEFAULT_MAX_PARTITION_BYTES)
        interval = _positive(lowered, "discoveryintervalms", DEFAULT_DISCOVERY_INTERVAL_MS)
        assert split_size is not None and max_partition is not None and interval is not None
        clean, archive_dir = _clean_source(lowered, path)
        multi_line = _bool(lowered, "multiline", False)
        line_sep, charset = _line_sep_and_charset(lowered, fmt, multi_line)
        infer_types = fmt is FileFormat.CSV and _bool(lowered, "inferschema", False)
        sampling_ratio = lowered.get("samplingratio") if fmt in (FileFormat.JSONL, FileFormat.CSV) else None
        merge_schema = fmt is FileFormat.PARQUET and _bool(lowered, "mergeschema", False)
        glob_filter = lowered.get("pathglobfilter")
        if glob_filter is not None:
            try:
                name_glob(glob_filter)
            except ValueError as e:
                raise InvalidOptionError(
                    "pathGlobFilter", glob_filter, f"a glob on file names ({_KNOWN['pathglobfilter']}): {e}"
                ) from None
        for key in ("modifiedbefore", "modifiedafter"):
            stamp = lowered.get(key)
            if stamp is not None:
                try:
                    parse_timestamp(stamp, "UTC")
                except ValueError as e:
                    raise InvalidOptionError(_name(key), stamp, f"{TIMESTAMP_EXPECTED}: {e}") from None
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
            multi_line=multi_line,
            path_glob_filter=glob_filter,
            recursive_file_lookup=_bool(lowered, "recursivefilelookup", False),
            ignore_missing_files=_bool(lowered, "ignoremissingfiles", False),
            ignore_corrupt_files=_bool(lowered, "ignorecorruptfiles", False),
            modified=ModifiedTimeFilter(lowered.get("modifiedbefore"), lowered.get("modifiedafter")),
            line_sep=line_sep,
            charset=charset,
            infer_types=infer_types,
            sampling_ratio_option=sampling_ratio,
            merge_schema=merge_schema,
            json_leniency=Leniency(
                single_quotes=_bool(lowered, "allowsinglequotes", True),
                comments=_bool(lowered, "allowcomments", False),
                unquoted_names=_bool(lowered, "allowunquotedfieldnames", False),
                leading_zeros=_bool(lowered, "allownumericleadingzeros", False),
                any_escape=_bool(lowered, "allowbackslashescapinganycharacter", False),
                control_chars=_bool(lowered, "allowunquotedcontrolchars", False),
                non_numeric=_bool(lowered, "allownonnumericnumbers", True),
            ),
            prefers_decimal=_bool(lowered, "prefersdecimal", False),
            primitives_as_string=_bool(lowered, "primitivesasstring", False),
            drop_field_if_all_null=_bool(lowered, "dropfieldifallnull", False),
        )

    def read_limits(self) -> ReadLimitOptions:
        """Admission control for streaming queries."""
        return ReadLimitOptions(max_files=self.max_files_per_trigger, max_bytes=self.max_bytes_per_trigger)
