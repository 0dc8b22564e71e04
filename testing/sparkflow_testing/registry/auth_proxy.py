"""A TLS / basic-auth / bearer-token reverse proxy in front of a test schema registry.

Apicurio Registry 2.6 authenticates clients only through an OIDC server (Keycloak); none runs
here. So the fixture puts this front before it to make a real server *enforce* what the registry
client's options claim: TLS with a certificate signed by the test CA (the client must trust it via
``ssl.ca.location``), optionally a client certificate signed by that CA (mutual TLS), and HTTP basic
credentials or a bearer token (401 otherwise, as Confluent's registry answers). Everything else
is forwarded unchanged to the registry over loopback HTTP.

Run as a child process (``python -m sparkflow_testing.registry.auth_proxy``); secrets come in
through the environment (``REGISTRY_PROXY_BASIC`` = ``user:password``, ``REGISTRY_PROXY_BEARER``),
never the command line, which ``ps`` shows. The standard library's threaded HTTP server is enough
for test traffic; no third-party proxy is on PyPI that does TLS client auth without a config language.

Threading: one thread per connection (``ThreadingHTTPServer``), each forwarding its own requests.
"""

from __future__ import annotations

import argparse
import base64
import hmac
import http.client
import os
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["main"]

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}


def _handler(upstream: str, basic: str | None, bearer: str | None) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)
    accepted = []
    if basic:
        accepted.append("Basic " + base64.b64encode(basic.encode()).decode())
    if bearer:
        accepted.append("Bearer " + bearer)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            return  # quiet: the fixture's log is the registry's

        def _authorized(self) -> bool:
            if not accepted:
                return True
            given = self.headers.get("Authorization", "")
            return any(hmac.compare_digest(given.encode(), a.encode()) for a in accepted)

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if not self._authorized():
                payload = b'{"error_code":401,"message":"Unauthorized"}'
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="registry"')
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            headers = {
                k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP | {"authorization"}
            }
            conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
            try:
                conn.request(self.command, target.path.rstrip("/") + self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in _HOP_BY_HOP | {"content-length"}:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _forward  # noqa: N815

    return Handler


def main(argv: list[str] | None = None) -> None:
    """Serve until killed (the fixture stops the process group)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT of the registry")
    parser.add_argument("--cert", help="server certificate (PEM); TLS when given")
    parser.add_argument("--key", help="server key (PEM)")
    parser.add_argument("--client-ca", help="require client certificates signed by this CA (PEM)")
    args = parser.parse_args(argv)
    handler = _handler(
        args.upstream, os.environ.get("REGISTRY_PROXY_BASIC"), os.environ.get("REGISTRY_PROXY_BEARER")
    )
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        if args.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(args.client_ca)
        # the handshake on the connection's own thread: a silent client cannot stall accept()
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    server.serve_forever()


if __name__ == "__main__":
    main()
