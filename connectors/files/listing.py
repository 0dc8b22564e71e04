"""Listing the files under ``path`` (a directory, a file or a glob), as Spark's file sources do."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from connector_base import InvalidOptionError

GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True, order=True)
class FileStatus:
    """A file as discovery saw it (ordered by modification time, then path)."""

    mtime_ms: int
    path: str
    size: int


def local_path(path: str) -> str:
    """``path`` without a ``file:`` scheme (only the local file system is supported)."""
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    if "://" in path:
        raise InvalidOptionError(
            "path", path, "a local path or a file: URI (remote file systems are not supported)"
        )
    return path


def is_glob(path: str) -> bool:
    """Whether ``path`` has glob characters."""
    return any(c in GLOB_CHARS for c in path)


NameFilter = Callable[[str], bool]
"""Whether a file's name (not its directory) is read (``pathGlobFilter``)."""


def name_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of a ``pathGlobFilter`` glob, translated as Hadoop's ``GlobPattern``
    translates it (``*``, ``?``, ``[abc]``, ``[!abc]`` / ``[^abc]``, ``{a,b}``, ``\\`` escapes),
    to match a whole file name; ``ValueError`` says what is wrong with it."""
    regex: list[str] = []
    in_set, curly, i = False, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
            if i >= len(pattern):
                raise ValueError("a backslash at the end escapes nothing")
            regex.append(re.escape(pattern[i]))
        elif c in ".$()|+":
            regex.append("\\" + c)
        elif c == "*":
            regex.append(".*")
        elif c == "?":
            regex.append(".")
        elif c == "{":
            regex.append("(?:")
            curly += 1
        elif c == "," and curly:
            regex.append("|")
        elif c == "}" and curly:
            regex.append(")")
            curly -= 1
        elif c == "[":
            if in_set:
                raise ValueError(f"a character class opened at {i} inside another")
            in_set = True
            regex.append("[")
        elif c == "^":
            regex.append("^" if in_set else "\\^")
        elif c == "!":
            regex.append("^" if in_set and pattern[i - 1] == "[" else "!")
        elif c == "]":
            in_set = False
            regex.append("]")
        else:
            regex.append(re.escape(c) if c in "{}" else c)
        i += 1
    if in_set:
        raise ValueError("a character class ([...]) is not closed")
    if curly:
        raise ValueError("a group ({...}) is not closed")
    try:
        return re.compile("".join(regex), re.DOTALL)
    except re.error as e:
        raise ValueError(str(e)) from None


def _hidden(name: str) -> bool:
    # Spark ignores _SUCCESS, _temporary, .crc files, .part-in-progress and the like
    return name.startswith(("_", "."))


def _status(path: str) -> FileStatus | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:  # deleted between listing and stat
        return None
    return FileStatus(st.st_mtime_ns // 1_000_000, os.path.abspath(path), st.st_size)


def _dir_files(directory: str, recursive: bool, names: NameFilter | None) -> list[str]:
    out: list[str] = []
    if recursive:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if not _hidden(d))
            out.extend(os.path.join(root, f) for f in files if not _hidden(f) and (names is None or names(f)))
        return out
    try:
        with os.scandir(directory) as entries:
            for e in entries:
                if not _hidden(e.name) and (names is None or names(e.name)) and e.is_file():
                    out.append(e.path)
    except FileNotFoundError:
        pass
    return out


def check_path(path: str) -> None:
    """Raise ``InvalidOptionError`` when a non-glob ``path`` does not exist."""
    local = local_path(path)
    if not is_glob(local) and not os.path.exists(local):
        raise InvalidOptionError("path", path, "an existing directory or file, or a glob")


def check_glob_matches(path: str, recursive: bool) -> None:
    """A bounded read fails at ``load()`` on a glob that matches nothing, as Spark's ``PATH_NOT_FOUND``."""
    local = local_path(path)
    if is_glob(local) and not glob.glob(local, recursive=recursive):
        raise InvalidOptionError(
            "path",
            path,
            "a glob that matches at least one file (Spark's file sources fail with PATH_NOT_FOUND too); "
            "set continuous=true to wait for files to appear",
        )


def glob_matches_anything(path: str, recursive: bool) -> bool:
    """Whether a glob ``path`` matches a file or directory (a non-glob path: whether it exists)."""
    local = local_path(path)
    return bool(glob.glob(local, recursive=recursive)) if is_glob(local) else os.path.exists(local)


def list_files(path: str, recursive: bool, names: NameFilter | None = None) -> list[FileStatus]:
    """The visible files under ``path``, oldest first; directories matched by a glob are listed too.

    ``names``: only the files whose name it accepts (``pathGlobFilter``; directories are entered
    whatever their name, and a file named by ``path`` itself must pass it too, as in Spark).
    """
    local = local_path(path)
    candidates: list[str] = []
    matches = sorted(glob.glob(local, recursive=recursive)) if is_glob(local) else [local]
    for m in matches:
        if os.path.isdir(m):
            candidates.extend(_dir_files(m, recursive, names))
        elif os.path.isfile(m) and (m == local or not _hidden(os.path.basename(m))):
            if names is None or names(os.path.basename(m)):
                candidates.append(m)
    statuses = {s.path: s for s in (_status(c) for c in candidates) if s is not None}
    return sorted(statuses.values())
