"""The planted bugs, one per guarantee they break, with the smallest test subset that guards each.

Each entry is an exact search/replace on one file (see ``Mutation``). Guards name the fewest test
modules (or tests) that should fail; broker-backed guards run on the real broker only
(``KAFKA_BROKERS=apache-kafka``; Pravega's default backend is the real standalone server where
Java and Maven exist). The first three are the planted bugs that issue
17 found passing the whole suite; their guards are the tests written for them (the suites that let
them pass are named in docs/mutants.md).
"""

from __future__ import annotations

from mutants.mutation import Mutation

__all__ = ["MUTATIONS"]

REAL_KAFKA = {"KAFKA_BROKERS": "apache-kafka"}
PYTHON_READER = {**REAL_KAFKA, "SPARKFLOW_KAFKA_READER": "python"}
"""For mutations of the confluent-kafka reader: ``kafka.reader=auto`` takes the compiled one where built."""
NATIVE_READER = {**REAL_KAFKA, "SPARKFLOW_KAFKA_READER": "native"}

_PRAVEGA_PLANNER = "connectors/pravega/planner.py"
_KAFKA_READER = "connectors/kafka/split_reader.py"
_KAFKA_UNIT = "unit_tests/connectors/kafka"

MUTATIONS: tuple[Mutation, ...] = (
    # --- the three planted bugs that passed the whole suite (issue 17 §5) ---------------------------
    Mutation(
        name="pravega-successor-released-while-a-predecessor-is-read",
        guarantee="successors after predecessors (Pravega merge, uneven predecessors)",
        path=_PRAVEGA_PLANNER,
        search="if hold and any(p in splits for p in split.predecessor_ids()):",
        replace="if hold and split.predecessors and all(p in splits for p in split.predecessor_ids()):",
        why="a merged segment is released once one predecessor is finished, while the other is still read",
        tests=("integration_tests/connectors/pravega/test_pravega_uneven_merge.py",),
    ),
    Mutation(
        name="kafka-jaas-error-lists-the-parsed-values",
        guarantee="redaction (no secret in any message)",
        path="connectors/kafka/client_config.py",
        search="""REDACTED, 'both username="..." and password="..."')""",
        replace="""REDACTED, f'both username="..." and password="..." (found {", ".join(args.values())})')""",
        why="a JAAS line with a password but no username: the error lists the values it parsed",
        tests=(
            "unit_tests/connectors/kafka/test_client_config.py",
            "integration_tests/connectors/kafka/test_kafka_bad_input.py::test_a_jaas_password_without_a_username_is_never_shown",
        ),
        env=REAL_KAFKA,
    ),
    Mutation(
        name="pravega-sink-txn-log-not-rewritten-after-a-replacement",
        guarantee="sink transactions and their log",
        path="connectors/pravega/sink.py",
        search="        if chosen != recorded:\n",
        replace="        if recorded is None:\n",
        why="a replayed batch replaces an aborted recorded transaction but the log keeps the aborted id; "
        "a second crash in that commit then commits the batch twice",
        tests=(
            "unit_tests/connectors/pravega/test_txn_log.py",
            "integration_tests/connectors/pravega/test_pravega_sink_driver_kill.py",
        ),
        timeout_s=1800.0,
    ),
    # --- stop offsets and EOF ----------------------------------------------------------------------
    Mutation(
        name="kafka-reader-reads-the-stop-offset",
        guarantee="stop offsets and EOF",
        path=_KAFKA_READER,
        search="msgs = msgs[: bisect.bisect_left(offsets, stop)]",
        replace="msgs = msgs[: bisect.bisect_right(offsets, stop)]",
        why="an executor emits the record at its range's end offset, which the next range reads again",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_reader.py::test_exact_ranges_replay_and_pooled_consumers",
        ),
        env=PYTHON_READER,
    ),
    Mutation(
        name="native-kafka-reader-reads-the-stop-offset",
        guarantee="stop offsets and EOF",
        path="connectors/kafka/native_split_reader.py",
        search='end = int(np.searchsorted(offsets, stop, "left"))',
        replace='end = int(np.searchsorted(offsets, stop, "right"))',
        why="the compiled reader's split emits the record at its range's end offset, read again next",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_reader.py::test_exact_ranges_replay_and_pooled_consumers",
        ),
        env=NATIVE_READER,
    ),
    Mutation(
        name="kafka-partition-eof-ignored-under-read-committed",
        guarantee="stop offsets and EOF",
        path=_KAFKA_READER,
        search="and m.offset() >= a.stop and a not in finished:",
        replace="and m.offset() > a.stop and a not in finished:",
        why="a range ending on a transaction marker never finishes (the last stable offset is its end)",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_streaming.py::test_read_committed_stream_crosses_transaction_markers",
        ),
        env=PYTHON_READER,
    ),
    Mutation(
        name="pravega-end-stream-cut-ignored",
        guarantee="stop offsets and EOF",
        path=_PRAVEGA_PLANNER,
        search="end = info.tail if not split.is_bounded else min(split.end_offset, info.tail)",
        replace="end = info.tail",
        why="a read with an end stream cut plans past the cut",
        tests=("integration_tests/connectors/pravega/test_pravega_read.py::test_start_and_end_stream_cuts",),
    ),
    Mutation(
        name="files-line-starting-at-a-range-boundary-skipped",
        guarantee="stop offsets and EOF (file byte ranges)",
        path="connectors/files/split_reader.py",
        search="        at = x - 1\n",
        replace="        at = x\n",
        why="a range that starts exactly at a line start skips that line",
        tests=("unit_tests/connectors/files/test_files_split_boundaries.py",),
    ),
    # --- data-loss detection ----------------------------------------------------------------------
    Mutation(
        name="kafka-executor-ignores-fail-on-data-loss",
        guarantee="data-loss detection",
        path=_KAFKA_READER,
        search="if self._options.fail_on_data_loss or resume is None:",
        replace="if resume is None:",
        why="records deleted below a planned range are skipped silently with failOnDataLoss=true",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_reader.py::test_data_loss_is_detected_on_executors",
        ),
        env=PYTHON_READER,
    ),
    Mutation(
        name="kafka-deleted-topic-unnoticed",
        guarantee="data-loss detection",
        path="connectors/kafka/planner.py",
        search="if s.partition not in existing.get(s.topic, ()):",
        replace="if s.topic in existing and s.partition not in existing[s.topic]:",
        why="a deleted topic (missing from the metadata altogether) is not reported as data loss",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_streaming.py::test_deleted_topic_fails_or_is_dropped",
        ),
        env=REAL_KAFKA,
    ),
    Mutation(
        name="pravega-truncation-below-the-position-unnoticed",
        guarantee="data-loss detection",
        path=_PRAVEGA_PLANNER,
        search="if info.head > pos and pos < end:",
        replace="if info.head > end:",
        why="a segment truncated past the position (but not past the tail) is not reported",
        tests=("integration_tests/connectors/pravega/test_pravega_truncation.py",),
    ),
    # --- bounded outages ---------------------------------------------------------------------------
    Mutation(
        name="kafka-reader-never-renews-a-stalled-consumer",
        guarantee="fault handling and bounded outages",
        path=_KAFKA_READER,
        search="if stalled_s >= self._stall_renew_s and self._renewed_at < self._last_progress:",
        replace="if False and stalled_s >= self._stall_renew_s:",
        why="a read whose consumer stopped getting records (half-open connections, a client stuck "
        "after a broker restart) waits out kafkaConsumer.pollTimeoutMs and fails the task",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_network_faults.py::"
            "test_a_stalled_read_gets_a_new_consumer_before_the_poll_timeout",
        ),
        env=REAL_KAFKA,
    ),
    # --- per-trigger limits -----------------------------------------------------------------------
    Mutation(
        name="kafka-max-offsets-per-trigger-off-by-one",
        guarantee="per-trigger limits",
        path="connectors/kafka/planner.py",
        search="upto = min(upto, s + max_records)",
        replace="upto = min(upto, s + max_records + 1)",
        why="each partition's quota admits one record more than the limit",
        tests=(f"{_KAFKA_UNIT}/test_split_and_enumerator.py",),
    ),
    Mutation(
        name="pravega-max-events-per-trigger-one-event-too-many",
        guarantee="per-trigger limits",
        path=_PRAVEGA_PLANNER,
        search="allowed = allowed[: max_records + 1]",
        replace="allowed = allowed[: max_records + 2]",
        why="the cut at event boundaries admits one event past the quota",
        tests=(
            "integration_tests/connectors/pravega/test_pravega_read.py::test_continuous_read_sees_new_events_with_limits",
        ),
    ),
    Mutation(
        name="max-files-per-trigger-admits-one-more",
        guarantee="per-trigger limits",
        path="connector_base/spark/read_limits.py",
        search="[: limits.max_files]",
        replace="[: limits.max_files + 1]",
        why="maxFilesPerTrigger admits one file more per batch",
        tests=(
            "unit_tests/connector_base/spark/test_read_limits.py",
            "unit_tests/connectors/files/test_files_offset_growth.py",
        ),
    ),
    Mutation(
        name="json-single-quotes-refused-by-default",
        guarantee="files read as Spark reads them",
        path="connectors/files/options.py",
        search='single_quotes=_bool(lowered, "allowsinglequotes", True)',
        replace='single_quotes=_bool(lowered, "allowsinglequotes", False)',
        why="a JSON line in single quotes, which Spark reads by default, is malformed",
        tests=(
            "unit_tests/connectors/files/test_files_json_lenient.py",
            "integration_tests/connectors/files/test_files_differential.py::test_fixed_differences_stay_fixed",
        ),
    ),
    Mutation(
        name="json-leading-zeros-kept-in-the-value",
        guarantee="files read as Spark reads them",
        path="connectors/files/formats/json_lenient.py",
        search="while start + drop < digits_end - 1 and",
        replace="while False and",
        why="allowNumericLeadingZeros=true still refuses 007",
        tests=(
            "unit_tests/connectors/files/test_files_json_lenient.py",
            "integration_tests/connectors/files/test_files_differential.py::test_fixed_differences_stay_fixed",
        ),
    ),
    Mutation(
        name="max-files-per-trigger-ignores-file-age",
        guarantee="per-trigger limits",
        path="connectors/files/source.py",
        search="return (-split.mtime_ms if self.options.latest_first else split.mtime_ms, split.path)",
        replace="return (0, split.path)",
        why="maxFilesPerTrigger admits files by path, not oldest first (or newest with latestFirst)",
        tests=(
            "integration_tests/connectors/files/test_files_differential.py::test_fixed_differences_stay_fixed",
        ),
    ),
    # --- exactly once across driver restarts ------------------------------------------------------
    Mutation(
        name="bridge-offset-drops-splits-not-yet-read",
        guarantee="exactly once across driver restarts (splits assigned but not yet read)",
        path="connector_base/spark/bridge.py",
        search="""            for sid, e in self.splits.items()
        }
        return BridgeOffset(""",
        replace="""            for sid, e in self.splits.items()
            if e.pos != e.first or (positions and positions.get(sid, e.pos) != e.first)
        }
        return BridgeOffset(""",
        why="a split handed out but not read yet (an empty partition, a held successor) is left out of "
        "the offset; after a restart the restored enumerator counts it as assigned and never hands it "
        "out again",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_streaming.py::test_restart_from_checkpoint_continues_exactly",
            "integration_tests/connectors/kafka/test_kafka_streaming.py::"
            "test_partitions_empty_when_the_query_stopped_are_read_after_the_restart",
        ),
        env=REAL_KAFKA,
    ),
    Mutation(
        name="bridge-new-split-first-range-skipped",
        guarantee="exactly once (a split new in a batch starts at its first position)",
        path="connector_base/spark/bridge.py",
        search="begin = s.splits[sid].pos if sid in s.splits else entry.first",
        replace="begin = s.splits[sid].pos if sid in s.splits else entry.pos",
        why="a split discovered and read in the same micro-batch (a new file) loses that first range",
        tests=(
            "integration_tests/connectors/files/test_files_spark_streaming.py::"
            "test_continuous_query_picks_up_files_added_while_it_runs",
        ),
    ),
    Mutation(
        name="kinesis-new-shards-start-at-the-initial-position",
        guarantee="successors after predecessors (Kinesis reshards: children from their start)",
        path="connectors/kinesis/enumerator.py",
        search="start = start_initial if initial else ShardPosition.trim_horizon()",
        replace="start = start_initial",
        why="a child shard found after the start begins at startingPosition (e.g. LATEST), losing records",
        tests=("unit_tests/connectors/kinesis/test_enumerator.py",),
    ),
    # --- successors after predecessors ------------------------------------------------------------
    Mutation(
        name="kafka-new-partitions-start-at-the-starting-offsets",
        guarantee="successors after predecessors (Kafka new partitions at earliest)",
        path="connectors/kafka/enumerator.py",
        search="self._options.starting if not self._initial_done else OffsetsInitializer.earliest()",
        replace="self._options.starting",
        why="partitions added after the start begin at startingOffsets=latest and lose their first records",
        tests=(f"{_KAFKA_UNIT}/test_split_and_enumerator.py",),
    ),
    Mutation(
        name="kinesis-merged-child-released-after-one-parent",
        guarantee="successors after predecessors (Kinesis reshards)",
        path="connectors/kinesis/planner.py",
        search="or any(p in splits for p in split.parent_shard_ids):",
        replace="or (split.parent_shard_ids and all(p in splits for p in split.parent_shard_ids)):",
        why="a merged child is read once one parent is finished, while the other parent is still read",
        # test_kinesis_reads' split-and-merge test skips on moto (RESHARDING_ROUTING) and, unlimited,
        # reads both parents to their end in one batch on kinesalite: it cannot see this bug
        tests=("unit_tests/connectors/kinesis/test_planner_successors.py",),
    ),
    # --- sink transactions ------------------------------------------------------------------------
    Mutation(
        name="pravega-sink-replay-keeps-an-aborted-transaction",
        guarantee="sink transactions and their log",
        path="connectors/pravega/sink.py",
        search='old if st in (*_COMMITTED, "OPEN") else new',
        replace='old if st != "NONE" else new',
        why="a re-run batch keeps a recorded transaction that was aborted: its events are lost",
        tests=("unit_tests/connectors/pravega/test_txn_log.py",),
    ),
    # --- Kafka sink delivery ----------------------------------------------------------------------
    Mutation(
        name="kafka-sink-pools-a-failed-tasks-producer",
        guarantee="sink delivery (at least once)",
        path="connectors/kafka/native_sink.py",
        search="producer_pool.release(key, client, reusable=delivered)",
        replace="producer_pool.release(key, client, reusable=True)",
        why="a producer whose delivery failed is lent to the next task, with what it still held queued",
        tests=(
            "integration_tests/connectors/kafka/test_kafka_sink.py::test_producers_are_pooled_between_tasks_and_a_failed_one_is_closed",
        ),
        env=NATIVE_READER,
    ),
    # --- event-time cut ---------------------------------------------------------------------------
    Mutation(
        name="event-time-cut-follows-the-fastest-split",
        guarantee="event-time cut",
        path="connector_base/spark/event_time_cut.py",
        search="        hi = min(tops)\n",
        replace="        hi = max(tops)\n",
        why="the cut is bounded by the split furthest ahead, so a slow split's rows arrive late",
        tests=("unit_tests/connector_base/spark/test_event_time_cut.py",),
    ),
    Mutation(
        name="offset-v2-loses-the-event-time-cut",
        guarantee="serializer versions",
        path="connector_base/spark/offsets.py",
        search='event_time=EventTimeMark.from_json(data.get("cut")) if version == 2 else None,',
        replace="event_time=None,",
        why="a restarted query forgets the logged cut and per-split event times",
        tests=("unit_tests/connector_base/spark/test_event_time_cut.py",),
    ),
    # --- backlog hysteresis -----------------------------------------------------------------------
    Mutation(
        name="backlog-leaves-below-the-enter-threshold",
        guarantee="backlog hysteresis",
        path="connector_base/spark/backlog.py",
        search="self._in_backlog = not all(v <= h.exit for h, v in known)",
        replace="self._in_backlog = any(v >= h.enter for h, v in known)",
        why="no hysteresis: the query leaves backlog as soon as the lag drops under the entry threshold",
        tests=("unit_tests/connector_base/spark/test_backlog.py",),
    ),
    # --- hybrid switch start ----------------------------------------------------------------------
    Mutation(
        name="hybrid-derived-start-rereads-the-last-millisecond",
        guarantee="hybrid switch start",
        path="connector_base/hybrid/switch_start.py",
        search="return previous_max_event_time_ms + 1 - self.overlap_ms",
        replace="return previous_max_event_time_ms - self.overlap_ms",
        why="the next stage starts at the previous stage's last event time: those records twice",
        tests=("unit_tests/connector_base/hybrid/test_hybrid_source.py",),
    ),
    # --- Async I/O order and bounds ---------------------------------------------------------------
    Mutation(
        name="async-ordered-queue-emits-every-completed-element",
        guarantee="Async I/O order",
        path="connector_base/async_io/ordered_queue.py",
        search="""        while self._elements and self._elements[0].done:
            ready.append(self._elements.popleft())""",
        replace="""        for element in [e for e in self._elements if e.done]:
            self._elements.remove(element)
            ready.append(element)""",
        why="ordered mode emits completed elements behind a pending head (out of order)",
        tests=("unit_tests/connector_base/async_io",),
    ),
    Mutation(
        name="async-queue-holds-one-more-than-capacity",
        guarantee="Async I/O bounds",
        path="connector_base/async_io/stream_element_queue.py",
        search="""            return self._size < self.capacity

    def __len__(self) -> int:
        with self._condition:
            return self._size

    def add(self, value: Any, key: str | None) -> StreamElement:
        \"\"\"Add an element; the caller has checked ``has_capacity``.\"\"\"
        element = StreamElement(value, key)
        with self._condition:
            if self._size >= self.capacity:""",
        replace="""            return self._size <= self.capacity

    def __len__(self) -> int:
        with self._condition:
            return self._size

    def add(self, value: Any, key: str | None) -> StreamElement:
        \"\"\"Add an element; the caller has checked ``has_capacity``.\"\"\"
        element = StreamElement(value, key)
        with self._condition:
            if self._size > self.capacity:""",
        why="capacity + 1 requests in flight",
        tests=("unit_tests/connector_base/async_io",),
    ),
    # --- redaction --------------------------------------------------------------------------------
    Mutation(
        name="redaction-forgets-pwd-names",
        guarantee="redaction",
        path="connector_base/redaction.py",
        search='r"pass(word|wd|phrase)?(?![a-z])|pwd|secret|',
        replace='r"pass(word|wd|phrase)?(?![a-z])|secret|',
        why="an option named like db.pwd is shown in errors",
        tests=("unit_tests/connector_base/test_redaction.py",),
    ),
    Mutation(
        name="redaction-keeps-url-passwords",
        guarantee="redaction",
        path="connector_base/redaction.py",
        search="""    out = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", out)\n""",
        replace="",
        why="a URL with user:password@ under an innocent option name is shown whole",
        tests=("unit_tests/connector_base/test_redaction.py",),
    ),
    # --- serializer versions ----------------------------------------------------------------------
    Mutation(
        name="serializer-accepts-a-future-version",
        guarantee="serializer versions",
        path="connector_base/serialization.py",
        search="if not isinstance(version, int) or version < 1 or version > self.version:",
        replace="if not isinstance(version, int) or version < 1:",
        why="state written by a newer release is read as if it were the current version",
        tests=("unit_tests/connector_base/test_serialization.py",),
    ),
    Mutation(
        name="files-enumerator-v1-forgets-processed-files",
        guarantee="serializer versions",
        path="connectors/files/enumerator.py",
        search='return FileEnumeratorState([str(p) for p in data["processed"]], pending)',
        replace="return FileEnumeratorState([], pending)",
        why="a version 1 checkpoint is read without its processed files: every file is read again",
        tests=("unit_tests/connectors/files/test_files_split.py",),
    ),
    # --- record formats: Avro unions ---------------------------------------------------------------
    Mutation(
        name="avro-native-union-member-by-position",
        guarantee="Avro unions decoded as Spark's member<i> structs",
        path="connectors/formats/avro_unions.py",
        search="_branch_values(codes, offsets, code, spark_unions(child, target.field(k).type))",
        replace="_branch_values(codes, offsets, k, spark_unions(child, target.field(k).type))",
        why="a union's members are taken by position among the non-null branches instead of their "
        "Arrow type code: with a null branch first every value lands in the wrong member",
        tests=("unit_tests/connectors/formats/test_avro_native.py",),
    ),
    Mutation(
        name="avro-fastavro-union-of-records-guessed",
        guarantee="Avro unions decoded as Spark's member<i> structs",
        path="connectors/formats/avro_decoder.py",
        search="            return_record_name=True,\n",
        replace="",
        why="the fastavro path reads a union of several records without their names and puts every "
        "value in the first record's member",
        tests=("unit_tests/connectors/formats/test_avro_native.py",),
    ),
    # --- files offset compaction ------------------------------------------------------------------
    Mutation(
        name="files-offset-keeps-paths-that-left-the-listing",
        guarantee="files offset compaction",
        path="connectors/files/enumerator.py",
        search="p: (m if m is not None else listed[p]) for p, m in self._processed.items() if p in listed",
        replace="p: (m if m is not None else listed.get(p)) for p, m in self._processed.items()",
        why="archived or deleted files stay in the offset forever (it grows without bound)",
        tests=("unit_tests/connectors/files/test_files_offset_growth.py",),
    ),
    Mutation(
        name="files-max-file-age-never-forgets",
        guarantee="files offset compaction",
        path="connectors/files/enumerator.py",
        search="self._processed = {p: m for p, m in self._processed.items() if m is None or m >= floor}",
        replace="self._processed = {p: m for p, m in self._processed.items() if m is None or m >= 0}",
        why="maxFileAge no longer drops aged files from the processed set",
        tests=("unit_tests/connectors/files/test_files_offset_growth.py",),
    ),
)
