"""Entry point: ``python -m demos --system files``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

SYSTEMS = {
    "async-io": "demos.async_io_demo",
    "files": "demos.files_demo",
    "kafka": "demos.kafka_demo",
    "kinesis": "demos.kinesis_demo",
    "pravega": "demos.pravega_demo",
}


def main(argv: list[str] | None = None) -> int:
    """Run the demo of one system."""
    parser = argparse.ArgumentParser(prog="python -m demos", description=__doc__)
    parser.add_argument("--system", default="kafka", choices=sorted(SYSTEMS))
    parser.add_argument("--seconds", type=float, default=20.0, help="how long new data keeps arriving")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    module = importlib.import_module(SYSTEMS[args.system])
    return int(module.run(args.seconds))


if __name__ == "__main__":
    sys.exit(main())
