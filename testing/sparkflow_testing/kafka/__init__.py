"""Kafka-protocol brokers.

Real Apache Kafka from Maven (:mod:`.apache_kafka`), the stand-ins (:mod:`.stand_ins`), their shared
:class:`~.broker.KafkaBroker` and the factory by kind (:mod:`.brokers`).
"""
