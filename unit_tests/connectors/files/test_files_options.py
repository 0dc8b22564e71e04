"""Option parsing: defaults, Spark's spellings, and errors naming option, value and valid choices."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connectors.files import FileFormat, FileSourceOptions, ParseMode


def test_defaults_and_case_insensitive_keys() -> None:
    opts = FileSourceOptions.parse({"PATH": "/x", "Format": "JSONL", "maxfilespertrigger": "3", "SEP": ";"})
    assert opts.format is FileFormat.JSONL and opts.mode is ParseMode.FAILFAST
    assert opts.max_files_per_trigger == 3 and opts.csv.sep == ";" and not opts.continuous
    limits = opts.read_limits()
    assert limits.max_files == 3 and limits.max_bytes is None


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"format": "text"}, ["'path'", "<missing>"]),
        ({"path": "/x", "format": "xml"}, ["'format'", "'xml'", "text, jsonl, csv, parquet"]),
        ({"path": "/x"}, ["'format'"]),
        (
            {"path": "/x", "format": "text", "splitSizeBytes": "-5"},
            ["'splitSizeBytes'", "'-5'", "positive integer"],
        ),
        ({"path": "/x", "format": "text", "maxBytesPerTrigger": "lots"}, ["'maxBytesPerTrigger'", "'lots'"]),
        ({"path": "/x", "format": "text", "discoveryIntervalMs": "0"}, ["'discoveryIntervalMs'"]),
        ({"path": "/x", "format": "text", "continuous": "yes"}, ["'continuous'", "true or false"]),
        (
            {"path": "/x", "format": "jsonl", "mode": "LENIENT"},
            ["'mode'", "FAILFAST, DROPMALFORMED, PERMISSIVE"],
        ),
        ({"path": "/x", "format": "csv", "sep": ";;"}, ["'sep'", "one character"]),
        ({"path": "/x", "format": "csv", "colour": "red"}, ["'colour'", "splitSizeBytes"]),
    ],
)
def test_invalid_options_name_option_value_and_choices(options, fragments) -> None:
    with pytest.raises(InvalidOptionError) as info:
        FileSourceOptions.parse(options)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_retention_options_parse_as_spark_spells_them() -> None:
    base = {"path": "/data/in", "format": "text"}
    opts = FileSourceOptions.parse(base)
    assert opts.max_file_age_ms == 7 * 24 * 3_600_000 and not opts.latest_first
    assert opts.clean_source.value == "off" and opts.source_archive_dir is None
    durations = [("7d", 604_800_000), ("12h", 43_200_000), ("30m", 1_800_000), ("15s", 15_000), ("250", 250)]
    for raw, ms in durations:
        assert FileSourceOptions.parse({**base, "maxFileAge": raw}).max_file_age_ms == ms
    archive = FileSourceOptions.parse({**base, "cleanSource": "ARCHIVE", "sourceArchiveDir": "/data/archive"})
    assert archive.clean_source.value == "archive" and archive.source_archive_dir == "/data/archive"
    newest = FileSourceOptions.parse({**base, "latestFirst": "true", "maxFilesPerTrigger": "5"})
    assert newest.file_age_limit_ms is None  # as Spark: maxFileAge is ignored then


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"maxFileAge": "a week"}, ["'maxFileAge'", "'a week'", "7d"]),
        ({"latestFirst": "yes"}, ["'latestFirst'", "true or false"]),
        ({"cleanSource": "move"}, ["'cleanSource'", "'move'", "off, archive, delete"]),
        ({"cleanSource": "archive"}, ["'sourceArchiveDir'", "required by cleanSource=archive"]),
        ({"cleanSource": "archive", "sourceArchiveDir": "/data/in/done"}, ["'sourceArchiveDir'", "outside"]),
        ({"sourceArchiveDir": "/data/archive"}, ["'sourceArchiveDir'", "unless cleanSource=archive"]),
    ],
)
def test_bad_retention_options_fail_naming_the_option(options: dict[str, str], fragments: list[str]) -> None:
    with pytest.raises(InvalidOptionError) as e:
        FileSourceOptions.parse({"path": "/data/in/*.txt", "format": "text", **options})
    for fragment in fragments:
        assert fragment in str(e.value)
