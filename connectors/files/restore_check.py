"""Refusing a checkpoint written for files outside the path the options name."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable

from connector_base.spark.restore_check import source_changed
from connectors.files.listing import is_glob, local_path

__all__ = ["check_files_restore", "path_selects"]


def path_selects(path_option: str, file_path: str) -> bool:
    """Whether a file belongs to ``path`` (a directory, a file or a glob), loosely: a glob's ``*``
    may cross directories here, so only files clearly outside the location are refused."""
    location = os.path.normpath(local_path(path_option))
    candidate = os.path.normpath(local_path(file_path))
    if is_glob(location):
        return fnmatch.fnmatchcase(candidate, location) or fnmatch.fnmatchcase(candidate, location + "/*")
    return candidate == location or candidate.startswith(location.rstrip("/") + "/")


def check_files_restore(path_option: str, recorded: Iterable[str]) -> set[str]:
    """Fail when the offset's files (processed, pending or in progress) lie outside ``path``."""
    outside = {p for p in recorded if not path_selects(path_option, p)}
    if outside:
        raise source_changed("files", outside, f"path={path_option}")
    return set()
