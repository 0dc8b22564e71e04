"""The connector error hierarchy: every error a connector raises on purpose is a ``ConnectorError``."""

from __future__ import annotations

__all__ = [
    "ConnectorError",
    "DataLossError",
    "InvalidOptionError",
    "MalformedRecordError",
    "ReaderFailedError",
    "SerializationError",
]


class ConnectorError(Exception):
    """Base class of every error raised by ``connector_base`` and the connectors."""


class InvalidOptionError(ConnectorError, ValueError):
    """An option is missing, unknown or has a value that is not valid.

    The message always names the option, the value given and what would be valid.
    """

    def __init__(self, option: str, value: object, expected: str) -> None:
        self.option = option
        self.value = value
        self.expected = expected
        shown = "<missing>" if value is None else repr(value)
        super().__init__(f"Invalid value {shown} for option '{option}': expected {expected}")


class DataLossError(ConnectorError):
    """Data that a micro-batch was planned to read is gone (deleted, truncated, expired)."""


class MalformedRecordError(ConnectorError):
    """A record could not be parsed; the message names where (file and offset, or split and position)."""


class SerializationError(ConnectorError):
    """Serialized state has an unknown version or a shape that cannot be read."""


class ReaderFailedError(ConnectorError):
    """A fetcher thread failed; the original exception is the ``__cause__``."""
