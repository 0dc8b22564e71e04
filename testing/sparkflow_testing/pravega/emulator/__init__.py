"""A Pravega protocol emulator for tests, demos and local development.

It serves the controller's gRPC API and the segment store's TCP wire protocol well enough for the
official ``pravega`` Python client (0.3.x) to work against it unchanged, plus a JSON/HTTP control
interface of its own (scale, truncate, inspect). Start it in its own process::

    python -m sparkflow_testing.pravega.emulator --controller-port 9090 --data-dir /tmp/pravega

See ``docs/pravega-emulator.md`` for what it covers and what it does not.
"""

from . import _requirements  # noqa: F401 - fails clearly without the pravega extra
from .control import ControlError, EmulatorControl
from .server import EmulatorPorts, PravegaEmulator

__all__ = ["PravegaEmulator", "EmulatorPorts", "EmulatorControl", "ControlError"]
