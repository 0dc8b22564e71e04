"""Refusing a checkpoint written for other topic partitions than the options select."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from connector_base.spark.restore_check import source_changed
from connectors.kafka.enumerator import KafkaEnumeratorState
from connectors.kafka.options import KafkaSourceOptions, Subscription, SubscriptionKind
from connectors.kafka.positions import TopicPartition
from connectors.kafka.split import KafkaPartitionSplit

__all__ = ["check_kafka_restore", "describe_subscription"]

LOG = logging.getLogger(__name__)


def describe_subscription(subscription: Subscription) -> str:
    """The subscription as the user wrote it (``subscribe=a,b``)."""
    match subscription.kind:
        case SubscriptionKind.SUBSCRIBE:
            return f"subscribe={','.join(subscription.topics)}"
        case SubscriptionKind.SUBSCRIBE_PATTERN:
            return f"subscribePattern={subscription.pattern}"
        case _:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in subscription.partitions:
                by_topic.setdefault(topic, []).append(partition)
            return f"assign={json.dumps(by_topic, separators=(',', ':'))}"


def _selects(subscription: Subscription, tp: TopicPartition) -> bool:
    if subscription.kind is SubscriptionKind.ASSIGN:
        return tp in subscription.partitions
    return subscription.matches(tp[0])


def check_kafka_restore(
    options: KafkaSourceOptions, state: KafkaEnumeratorState, splits: Mapping[str, KafkaPartitionSplit]
) -> set[str]:
    """Fail on partitions of the checkpoint that the subscription no longer selects.

    As Spark's Kafka source, ``failOnDataLoss=false`` drops them with a warning instead (their
    split ids are returned); partitions newly selected are read as newly discovered ones.
    """
    recorded = set(state.assigned) | {(s.topic, s.partition) for s in splits.values()}
    gone = sorted(tp for tp in recorded if not _selects(options.subscription, tp))
    if not gone:
        return set()
    now = describe_subscription(options.subscription)
    names = [f"{t}-{p}" for t, p in gone]
    if options.fail_on_data_loss:
        raise source_changed(
            "topic partitions",
            names,
            now,
            ", or set failOnDataLoss=false to drop them and read the new selection",
        )
    LOG.warning(
        "the checkpoint holds topic partitions %s that %s no longer selects; dropped (failOnDataLoss=false)",
        ", ".join(names),
        now,
    )
    gone_set = set(gone)
    return {sid for sid, s in splits.items() if (s.topic, s.partition) in gone_set}
