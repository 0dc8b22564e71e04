"""``SourceCleaner``: archives or deletes a file once a committed micro-batch has read all of it.

As Spark's file source ``cleanSource``: ``archive`` moves ``/in/a.csv`` to
``<sourceArchiveDir>/in/a.csv`` (the source path kept below the archive directory), ``delete``
removes it. A file that cannot be cleaned is logged and left in place: cleaning never fails a query.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable

from connectors.files.options import CleanSource

LOG = logging.getLogger(__name__)


class SourceCleaner:
    """Cleans fully read files on the driver, after Spark commits the batch that read them."""

    def __init__(self, mode: CleanSource, archive_dir: str | None) -> None:
        if mode is CleanSource.ARCHIVE and archive_dir is None:
            raise ValueError("cleanSource=archive needs an archive directory")
        self._mode = mode
        self._archive_dir = archive_dir

    @property
    def active(self) -> bool:
        """Whether files are cleaned at all."""
        return self._mode is not CleanSource.OFF

    def archive_path(self, path: str) -> str:
        """Where ``archive`` moves ``path``."""
        assert self._archive_dir is not None
        return os.path.join(self._archive_dir, os.path.abspath(path).lstrip(os.sep))

    def clean(self, paths: Iterable[str]) -> int:
        """Archive or delete each of ``paths``; returns how many were cleaned now."""
        if not self.active:
            return 0
        done = 0
        for path in paths:
            try:
                if self._mode is CleanSource.DELETE:
                    os.remove(path)
                else:
                    target = self.archive_path(path)
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    shutil.move(path, target)
                done += 1
            except FileNotFoundError:
                LOG.debug("%s is gone already (cleaned by an earlier commit of this batch)", path)
            except OSError as e:
                LOG.warning("cleanSource=%s could not clean %s: %s", self._mode.value, path, e)
        if done:
            LOG.info("cleanSource=%s: %d files cleaned", self._mode.value, done)
        return done
