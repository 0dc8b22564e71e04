from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.process_cpu import ProcessCpu, role_of

BUSY = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end:\n    pass\n"


def test_roles_follow_the_command_lines_of_spark_its_workers_and_the_broker() -> None:
    java = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java -cp /x/pyspark/jars/a.jar"
    assert role_of(10, f"{java} -Xmx1g org.apache.spark.deploy.SparkSubmit pyspark-shell", 1) == "spark-jvm"
    assert role_of(11, "java -Xmx384m -cp k.jar kafka.Kafka /tmp/server.properties", 1) == "broker"
    assert role_of(12, "/v/bin/python /v/bin/sparkflow-python -m pyspark.daemon", 1) == "python-workers"
    assert role_of(1, "/v/bin/python -m benchmarks.kafka_read", 1) == "driver"
    assert role_of(13, "/v/bin/python -m pytest unit_tests", 1) is None
    assert role_of(14, "java -cp zk.jar org.apache.zookeeper.Server", 1) is None


def test_a_childs_cpu_counts_under_its_role_and_the_drivers_under_its_own() -> None:
    meter = ProcessCpu()
    meter.start()
    # a child whose command line names pyspark, as Spark's Python workers' do: it spends 0.4 CPU-s,
    # says so, and waits to be read while still running
    child = subprocess.Popen(
        [sys.executable, "-c", BUSY + "print('spent', flush=True)\ninput()\n", "pyspark.daemon"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "spent\n"
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    spent = meter.stop()
    child.communicate("\n", timeout=30)
    assert 0.35 <= spent["python-workers"] <= 1.5, spent
    assert spent["driver"] >= 0.15, spent
    assert spent["spark-jvm"] == 0.0 and spent["broker"] == 0.0
