"""The connector error hierarchy: every error a connector raises on purpose is a ``ConnectorError``."""

from __future__ import annotations

from connector_base.redaction import redact_text, shown_value

__all__ = [
    "ConnectorError",
    "DataLossError",
    "InvalidOptionError",
    "MalformedRecordError",
    "ReaderFailedError",
    "SerializationError",
    "UnsupportedOperationError",
]


class ConnectorError(Exception):
    """Base class of every error raised by ``connector_base`` and the connectors."""


class InvalidOptionError(ConnectorError, ValueError):
    """An option is missing, unknown or has a value that is not valid.

    The message always names the option, the value given and what would be valid. The value is
    redacted when the option's name or the value's shape says it may be a secret (see
    ``connector_base.redaction``); ``value`` keeps the redacted form, so no copy of it leaks later.
    """

    def __init__(self, option: str, value: object, expected: str) -> None:
        self.option = option
        self.value = shown_value(option, value)
        self.expected = redact_text(expected)
        shown = "<missing>" if value is None else repr(self.value)
        super().__init__(f"Invalid value {shown} for option '{option}': expected {self.expected}")


class DataLossError(ConnectorError):
    """Data that a micro-batch was planned to read is gone (deleted, truncated, expired)."""


class MalformedRecordError(ConnectorError):
    """A record could not be parsed; the message names where (file and offset, or split and position)."""


class SerializationError(ConnectorError):
    """Serialized state has an unknown version or a shape that cannot be read."""


class ReaderFailedError(ConnectorError):
    """A fetcher thread failed; the original exception is the ``__cause__``."""


class UnsupportedOperationError(ConnectorError, NotImplementedError):
    """An optional operation the component does not implement (pausing splits for alignment)."""
