"""moto's server answering one request at a time: ``python -m sparkflow_testing.kinesis.moto_serial``.

moto's Kinesis shard picks a record's sequence number as "the largest so far plus one" and stores the
record under it, without a lock (moto says so in ``Shard.put_record``). Its own server
(``python -m moto.server``) is threaded, so two ``PutRecords`` calls on one shard at once (two Spark
tasks writing one stream) can take the same number, and the second record replaces the first: a
record the service acknowledged is lost. The real service and kinesalite never do that. Serialising
the requests (moto keeps everything in memory; a request takes about a millisecond) removes the race
without hiding anything else: connections stay concurrent, only the backend's work is one at a time.

This wraps moto's own WSGI application and request handler (moto has no option for it); nothing of
moto's behaviour is copied.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Iterable
from typing import Any


def serialised(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """A WSGI application that runs ``app`` (and reads its whole answer) under one lock."""
    lock = threading.Lock()

    def run(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with lock:
            answer = app(environ, start_response)
            try:
                return list(answer)
            finally:
                close = getattr(answer, "close", None)
                if close is not None:
                    close()

    return run


def main() -> None:
    """Run moto's server on ``--host``/``--port`` with serialised requests."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args()
    app = DomainDispatcherApplication(create_backend_app)
    run_simple(args.host, args.port, serialised(app), threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
