"""The brokers and services the tests of sparkflow-connectors start (the ``sparkflow-testing`` distribution).

Organised by what it starts: :mod:`~sparkflow_testing.kafka` (real Apache Kafka from Maven, the
noida-db and tansu stand-ins), :mod:`~sparkflow_testing.pravega` (standalone Pravega from Maven, the
project's emulator, the admin client and security material), :mod:`~sparkflow_testing.kinesis` (moto,
kinesalite, LocalStack), :mod:`~sparkflow_testing.registry` (schema registries),
:mod:`~sparkflow_testing.spark` (a standalone cluster, a Connect server, Spark's own Kafka source),
:mod:`~sparkflow_testing.network` (the TCP fault proxy) and :mod:`~sparkflow_testing.services` (Redis,
a scripted HTTP service, Async I/O lookups). :mod:`~sparkflow_testing.maven` resolves pinned Maven
artifacts; :mod:`~sparkflow_testing.processes` starts, waits for and stops server process groups.

The connectors never import this package (a unit test checks it).
"""
