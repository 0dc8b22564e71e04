"""``pathGlobFilter`` and ``recursiveFileLookup``: which files are read, as Spark's file index picks them.

Expected names are what Spark 4 read for the same trees (checked with the venv's pyspark); the
differential harness draws both options and compares live.
"""

from __future__ import annotations

import os

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from connector_base import InvalidOptionError
from connectors.files import FileSourceOptions
from connectors.files.listing import check_glob_matches, list_files, name_glob
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import read_ranges

ID = StructType([StructField("id", LongType())])


@pytest.mark.parametrize(
    ("glob", "name", "matches"),
    [
        ("*.txt", "x.txt", True),
        ("*.txt", "x.txt.gz", False),
        ("{x,y}.*", "y.csv", True),
        ("[!x].txt", "y.txt", True),
        ("[^x].txt", "x.txt", False),
        ("x.tx?", "x.txt", True),
        ("*.TXT", "x.txt", False),  # case matters
        ("x}", "x}", True),  # a closing brace outside a group is itself
        ("a,b", "a,b", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("p=1", "p=1", True),
        ("", "x", False),
    ],
)
def test_path_glob_filter_is_hadoops_glob_on_the_whole_name(glob, name, matches) -> None:
    assert bool(name_glob(glob).fullmatch(name)) is matches


@pytest.mark.parametrize(
    ("glob", "why"), [("[x", "not closed"), ("*.{txt", "not closed"), ("\\", "escapes nothing")]
)
def test_an_invalid_path_glob_filter_is_refused_naming_it(glob, why) -> None:
    with pytest.raises(InvalidOptionError, match=f"pathGlobFilter.*{why}"):
        FileSourceOptions.parse({"path": "/x", "format": "text", "pathGlobFilter": glob})


def _tree(root, files: list[str]) -> None:
    for rel in files:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f'{{"id": {len(rel)}}}\n')


def _names(options: dict[str, str]) -> list[str]:
    opts = FileSourceOptions.parse(options)
    statuses = list_files(opts.path, opts.lists_recursively, opts.name_filter())
    return sorted(os.path.relpath(s.path, options["path"]) for s in statuses)


def test_the_glob_filters_file_names_only_and_partition_directories_still_give_columns(tmp_path) -> None:
    _tree(tmp_path, ["p=1/a.json", "p=2/b.json", "p=2/c.txt", "p=3/.h.json"])
    options = {"path": str(tmp_path), "format": "jsonl", "recursive": "true", "pathGlobFilter": "*.json"}
    assert _names(options) == ["p=1/a.json", "p=2/b.json"]
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint,p:int>"
    # a file named by the path itself must match too
    assert _names({**options, "path": str(tmp_path / "p=2" / "c.txt")}) == []


def test_recursive_file_lookup_reads_every_level_without_partition_columns(tmp_path) -> None:
    _tree(tmp_path, ["top.json", "p=1/a.json", "p=2/q=x/b.json", "sub/_skipped/c.json", "sub/d.json"])
    options = {"path": str(tmp_path), "format": "jsonl", "recursiveFileLookup": "true"}
    assert _names(options) == ["p=1/a.json", "p=2/q=x/b.json", "sub/d.json", "top.json"]
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint>"
    # with recursive=true too: still no partition columns (Spark turns partition inference off)
    both = {**options, "recursive": "true"}
    assert infer_schema(FileSourceOptions.parse(both)).simpleString() == "struct<id:bigint>"
    rows = read_ranges(both, ID)
    assert sorted(r["id"] for r in rows) == sorted(len(r) for r in _names(options))
    assert _names({**options, "recursiveFileLookup": "false"}) == ["top.json"]
    with pytest.raises(InvalidOptionError, match="recursiveFileLookup"):
        FileSourceOptions.parse({**options, "recursiveFileLookup": "yes"})


def test_a_glob_path_whose_files_the_filter_rejects_reads_nothing(tmp_path) -> None:
    _tree(tmp_path, ["part-0.json"])
    path = str(tmp_path / "part-*")
    check_glob_matches(path, False)  # the glob matches: no PATH_NOT_FOUND, as Spark
    assert _names({"path": path, "format": "jsonl", "pathGlobFilter": "*.csv"}) == []
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl", "pathGlobFilter": "*.csv"}, ID)
    assert rows == []
