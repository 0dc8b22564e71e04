"""Schema registries for tests: Apicurio Registry (its Confluent-compatible API) and a secure front.

:mod:`.apicurio` starts Apicurio Registry 2.6.13 from its Maven Central distribution;
:mod:`.auth_proxy` is the TLS / basic-auth / bearer front that enforces what Apicurio 2.6 leaves to
an OIDC server.
"""
