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
