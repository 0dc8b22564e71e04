"""A Spark standalone cluster (master + two 1-core workers) and a driver application on it.

``spark_cluster`` starts the cluster from the installed pyspark; ``cluster_driver`` is a spawned
child process holding the SparkSession of one application on it (PySpark allows one SparkContext
per process, and the rest of the suite shares a ``local[2]`` one), running the functions of
:mod:`integration_tests.cluster.driver_jobs`. Brokers are started for this package only: real Kafka,
the run's Pravega backend, and kinesalite (moto where kinesalite is not installed).

Every fixture here is package-scoped: the cluster, the Connect server and the brokers stop when the
package's last test ends, not with the whole run (in a fresh-clone run they idled for half an hour
after it, the Pravega standalone alone using most of a core).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import pytest

from integration_tests.cluster import driver_jobs
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.brokers import start_broker
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, kinesalite_bin, start_endpoint
from sparkflow_testing.pravega.cluster import PravegaCluster, pravega_cluster
from sparkflow_testing.spark.cluster import SparkStandaloneCluster
from sparkflow_testing.spark.connect import SparkConnectServer

JOB_TIMEOUT_S = 240.0


class ClusterDriver:
    """A Spark client in a child process; ``run(job, ...)`` calls a driver_jobs function there."""

    def __init__(self, initializer: Callable[..., None], *initargs: Any) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=initializer,
            initargs=initargs,
        )

    @classmethod
    def on_cluster(cls, cluster: SparkStandaloneCluster) -> ClusterDriver:
        """The driver of one application on ``cluster``, its executors registered."""
        driver = cls(driver_jobs.start_session, cluster.session_conf(), cluster.driver_env())
        driver.run(driver_jobs.warm_up, cluster.total_cores)
        return driver

    def submit(self, job: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        """Start ``job`` in the driver; the caller waits on the future."""
        return self._pool.submit(driver_jobs.call, job, *args, **kwargs)

    def run(self, job: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``job`` in the driver and return its result (bounded by ``JOB_TIMEOUT_S``)."""
        return self.submit(job, *args, **kwargs).result(JOB_TIMEOUT_S)

    def close(self) -> None:
        try:
            self.submit(driver_jobs.stop_session).result(60)
        finally:
            for proc in list(self._pool._processes.values()):  # a hung driver must not outlive the run
                proc.kill()
            self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="package")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkStandaloneCluster]:
    """A master and two workers (one core each) for the whole session."""
    cluster = SparkStandaloneCluster.start(workers=2, workdir=tmp_path_factory.mktemp("spark-cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="package")
def cluster_driver(spark_cluster: SparkStandaloneCluster) -> Iterator[ClusterDriver]:
    """One application on the cluster, its executors registered."""
    driver = ClusterDriver.on_cluster(spark_cluster)
    yield driver
    driver.close()


@pytest.fixture(scope="package")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkConnectServer]:
    """A Spark Connect server (local[2]) started from the pyspark wheel."""
    server = SparkConnectServer.start(workdir=tmp_path_factory.mktemp("spark-connect"))
    yield server
    server.stop()


@pytest.fixture(scope="package")
def connect_client(connect_server: SparkConnectServer) -> Iterator[ClusterDriver]:
    """A Spark Connect client session in a child process (Connect mode is process-wide)."""
    client = ClusterDriver(driver_jobs.start_remote_session, connect_server.url)
    yield client
    client.close()


@pytest.fixture(scope="package")
def cluster_kafka() -> Iterator[KafkaBroker]:
    """A real Kafka broker (child JVM) for this package."""
    broker = start_broker("apache-kafka")
    yield broker
    broker.stop()


@pytest.fixture(scope="package")
def cluster_pravega(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PravegaCluster]:
    """The run's Pravega backend (the real standalone where Java and Maven exist)."""
    with pravega_cluster(log_dir=tmp_path_factory.mktemp("cluster-pravega")) as cluster:
        yield cluster


@pytest.fixture(scope="package")
def cluster_kinesis() -> Iterator[KinesisEndpoint]:
    """kinesalite, or moto where kinesalite is not installed."""
    endpoint = start_endpoint("kinesalite" if kinesalite_bin() is not None else "moto")
    yield endpoint
    endpoint.stop()
