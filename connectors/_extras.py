"""Client libraries that come with a pip extra: checked when a format is used, never at import.

Spark imports every top-level ``pyspark_*`` module to register Python data sources, and one module
that fails to import stops all of them from registering. So no connector imports its client library
(``confluent_kafka``, ``botocore``, ``grpc``) at module level; the adapter calls ``require_extra``
when a reader or writer is built, and a missing extra fails ``load()`` / ``start()`` with the
command that installs it.
"""

from __future__ import annotations

from importlib.util import find_spec

from connector_base import ConnectorError

__all__ = ["MissingExtraError", "require_extra"]

DISTRIBUTION = "sparkflow-connectors"


class MissingExtraError(ConnectorError, ImportError):
    """A format's client library is not installed; the message names the extra that installs it."""


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package of a dotted name is missing
        return False


def require_extra(user: str, extra: str, modules: tuple[str, ...]) -> None:
    """Raise ``MissingExtraError`` unless every module of ``modules`` can be imported.

    ``user`` names what needs them in the message, for example ``"format 'kafka-unified'"``.
    """
    missing = [m for m in modules if not _installed(m)]
    if missing:
        raise MissingExtraError(
            f"{user} needs the Python package(s) {', '.join(missing)}, not installed "
            f"in this Python: pip install '{DISTRIBUTION}[{extra}]' (into the interpreter PYSPARK_PYTHON "
            "points to, on every node)"
        )
