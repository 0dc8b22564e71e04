"""Spark.

A standalone cluster (:mod:`.cluster`) and a Connect server (:mod:`.connect`) from the pyspark wheel,
and Spark's own Kafka source jars (:mod:`.kafka_source`).
"""
