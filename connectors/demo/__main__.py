"""Entry point: ``python -m connectors.demo --system files``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

SYSTEMS = {
    "async-io": "connectors.demo.async_io_demo",
    "files": "connectors.demo.files_demo",
    "kafka": "connectors.demo.kafka_demo",
    "kinesis": "connectors.demo.kinesis_demo",
    "pravega": "connectors.testing.pravega_demo",
}


def main(argv: list[str] | None = None) -> int:
    """Run the demo of one system."""
    parser = argparse.ArgumentParser(prog="python -m connectors.demo", description=__doc__)
    parser.add_argument("--system", default="kafka", choices=sorted(SYSTEMS))
    parser.add_argument("--seconds", type=float, default=20.0, help="how long new data keeps arriving")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    module = importlib.import_module(SYSTEMS[args.system])
    return int(module.run(args.seconds))


if __name__ == "__main__":
    sys.exit(main())
