"""A broker's ``kill()`` waits for its whole process group; ``restart()`` comes back as the one listening.

noida-db is the launcher whose real binary runs as its child: the restart race of issue 21 (a
``restart()`` whose ``kill()`` waited for the launcher only, the old binary still alive, the new
launcher exiting with "noida-db is already running") happened on it.
"""

from __future__ import annotations

import os
import socket

import psutil
import pytest

from sparkflow_testing.kafka.stand_ins import start_noida_db
from sparkflow_testing.processes import group_members, listening_pids

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

RESTARTS = 3
RECORDS = 200


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_noida_db_restarts_cleanly_again_and_again_with_its_data() -> None:
    broker = start_noida_db()
    try:
        port = int(broker.bootstrap.rsplit(":", 1)[1])
        topic = broker.create_topic(2)
        broker.produce(topic, [f"v{i}".encode() for i in range(RECORDS)])
        expected = sum(len(records) for records in broker.log_contents(topic).values())
        assert expected == RECORDS
        for round_ in range(RESTARTS):
            old_group = broker.process_group
            assert old_group is not None
            old_members = group_members(old_group)
            assert len(old_members) >= 2, f"expected the launcher and its binary, got {old_members}"

            broker.kill()
            assert broker.process_group is None
            assert group_members(old_group) == []
            assert not [p for p in old_members if _alive(p)], "kill() returned before the group was gone"
            assert listening_pids(port) is None, "the old broker still holds the port"

            broker.restart()
            new_group = broker.process_group
            assert new_group is not None and new_group != old_group
            owners = listening_pids(port)
            assert owners, f"round {round_}: nothing listens on {port} after restart()"
            assert {os.getpgid(pid) for pid in owners} == {new_group}
            contents = broker.log_contents(topic)
            assert sum(len(records) for records in contents.values()) == RECORDS, f"round {round_}"
        broker.produce(topic, [b"after"])
        assert sum(len(records) for records in broker.log_contents(topic).values()) == RECORDS + 1
        last_group = broker.process_group
    finally:
        broker.stop()
    assert last_group is not None and group_members(last_group) == []


def test_apache_kafka_that_cannot_start_again_says_why() -> None:
    """A restart whose port another process holds: the JVM exits, is started once more, exits again,
    and the error leads with Kafka's own reason (its SLF4J backend is bound: with Kafka's 1.7 API
    and no binding for it, the broker once logged nothing, and such a failure gave no reason)."""
    from sparkflow_testing.kafka.apache_kafka import start_apache_kafka

    broker = start_apache_kafka()
    try:
        host, port = broker.bootstrap.rsplit(":", 1)
        broker.kill()
        with socket.socket() as holder:
            holder.bind((host, int(port)))
            holder.listen()
            with pytest.raises(RuntimeError) as failed:
                broker.restart()
        message = str(failed.value)
        first = message.split(" | ")[0]
        assert first.startswith("apache-kafka exited with 1: "), message[:600]
        assert "ERROR" in first and f"{host}:{port}" in first, message[:1500]
        assert "(the first start: apache-kafka exited with 1: " in message
        broker.restart()  # the port free again: it starts, with the data it had
        assert broker.exit_reason() is None
    finally:
        broker.stop()
