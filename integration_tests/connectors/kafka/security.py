"""The options a Spark user passes for each way of connecting to the secured test broker."""

from __future__ import annotations

from sparkflow_testing.kafka.apache_kafka import KafkaSecurity

_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "SSL-JKS", "SSL-PKCS12", "SSL-PEM")


def jaas(module: str, user: str, password: str) -> str:
    """A ``kafka.sasl.jaas.config`` value as Spark users write it."""
    return f'{module} required username="{user}" password="{password}";'


def client_options(
    security: KafkaSecurity, listeners: dict[str, str], mechanism: str, password: str | None = None
) -> dict[str, str]:
    """``kafka.*`` options (bootstrap included) for ``mechanism``; ``password`` overrides the right one."""
    if mechanism == "PLAIN":
        return {
            "kafka.bootstrap.servers": listeners["SASL_PLAINTEXT"],
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.jaas.config": jaas(
                _PLAIN_MODULE, security.plain_user, password or security.plain_password
            ),
        }
    if mechanism.startswith("SCRAM"):
        return {
            "kafka.bootstrap.servers": listeners["SASL_PLAINTEXT"],
            "kafka.security.protocol": "SASL_PLAINTEXT",
            "kafka.sasl.mechanism": mechanism,
            "kafka.sasl.jaas.config": jaas(
                _SCRAM_MODULE, security.scram_user, password or security.scram_password
            ),
        }
    store = {
        "SSL-JKS": (security.truststore_jks, "JKS"),
        "SSL-PKCS12": (security.truststore_p12, "PKCS12"),
        "SSL-PEM": (security.ca_pem, "PEM"),
    }[mechanism]
    options = {
        "kafka.bootstrap.servers": listeners["SSL"],
        "kafka.security.protocol": "SSL",
        "kafka.ssl.truststore.location": str(store[0]),
        "kafka.ssl.truststore.type": store[1],
    }
    if store[1] != "PEM":
        options["kafka.ssl.truststore.password"] = password or security.store_password
    return options
