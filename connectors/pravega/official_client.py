"""``official_manager``: a ``pravega_client.StreamManager`` for the connector's settings.

The official client (PyPI ``pravega``) holds the GIL while it blocks: use it only where no Pravega
server runs in the same process (Spark workers, the local runtime against a separate cluster).
"""

from __future__ import annotations

import os
from typing import Any

from connectors.pravega.controller_client import ConnectionSettings

__all__ = ["official_manager"]


def official_manager(c: ConnectionSettings) -> Any:
    """A ``StreamManager``; credentials and the trust store reach the Rust client through its environment."""
    import pravega_client

    if c.auth_enabled:
        if c.auth_token:
            os.environ["pravega_client_auth_method"] = "Bearer"
            os.environ["pravega_client_auth_token"] = c.auth_token
        else:
            os.environ["pravega_client_auth_method"] = "Basic"
            os.environ["pravega_client_auth_username"] = c.username or ""
            os.environ["pravega_client_auth_password"] = c.password or ""
    if c.tls_enabled and c.trust_store:
        os.environ["pravega_client_tls_cert_path"] = c.trust_store  # a PEM file of trusted certificates
    return pravega_client.StreamManager(c.controller, c.auth_enabled, c.tls_enabled)
