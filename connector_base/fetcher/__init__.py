"""Fetcher threads and their managers."""

from connector_base.fetcher.split_fetcher import SplitFetcher
from connector_base.fetcher.split_fetcher_manager import (
    MultiThreadFetcherManager,
    SingleThreadFetcherManager,
    SplitFetcherManager,
)
from connector_base.fetcher.split_fetcher_task import FetchTask, SplitFetcherTask

__all__ = [
    "FetchTask",
    "MultiThreadFetcherManager",
    "SingleThreadFetcherManager",
    "SplitFetcher",
    "SplitFetcherManager",
    "SplitFetcherTask",
]
