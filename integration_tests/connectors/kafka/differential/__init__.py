"""Differential tests: the same read or write through Spark's own ``kafka`` format and ``kafka-unified``.

``topics.py`` builds (and reuses) topics of generated shapes on real Apache Kafka, ``options.py``
generates source options with hypothesis, ``harness.py`` runs one example through both formats and
compares what each returned, ``allowed.py`` lists the differences docs/kafka.md's parity table calls
"different on purpose" (each cites the row by its anchor).
"""
