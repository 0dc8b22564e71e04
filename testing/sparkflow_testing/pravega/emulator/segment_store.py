"""The emulated segment store: an asyncio TCP server speaking the Pravega wire protocol.

Each connection is served by one task that reads frames in order. Appends, table updates and
metadata requests are answered inline, so replies keep request order on a connection, as writers
expect. Reads are answered by a task per request, because a read at the tail waits (at most
``tail_wait`` seconds) for data, as the real store does, and must not hold up other requests on the
same connection. A frame with an unknown type code is logged at WARNING and the connection is
closed, since its body cannot be parsed.

Threading: none; everything runs on the emulator's asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from . import wire_commands as wc
from .storage import (
    NULL_ATTRIBUTE_VALUE,
    BadOffsetError,
    NoSuchSegmentError,
    SegmentError,
    SegmentExistsError,
    SegmentSealedError,
    SegmentStorage,
)
from .tables import BadKeyVersionError, KeyNotFoundError, TableError

__all__ = ["SegmentStoreServer", "MAX_READ_SIZE"]

_LOG = logging.getLogger(__name__)
MAX_READ_SIZE = 1024 * 1024
_TRANSIENT_DELIMITER = "#transient."


class SegmentStoreServer:
    """Serves segments and table segments from a :class:`SegmentStorage`."""

    def __init__(self, storage: SegmentStorage, tail_wait: float = 1.0) -> None:
        self.storage = storage
        self.tail_wait = tail_wait
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._handlers: dict[type[wc.WireCommand], Callable[[_Connection, Any], Any]] = {
            wc.Hello: self._hello,
            wc.KeepAlive: self._keep_alive,
            wc.SetupAppend: self._setup_append,
            wc.AppendBlock: self._append_block,
            wc.AppendBlockEnd: self._append_block_end,
            wc.ConditionalAppend: self._conditional_append,
            wc.ConditionalBlockEnd: self._conditional_block_end,
            wc.ReadSegment: self._read_segment,
            wc.GetStreamSegmentInfo: self._get_info,
            wc.CreateSegment: self._create_segment,
            wc.CreateTransientSegment: self._create_transient,
            wc.SealSegment: self._seal,
            wc.TruncateSegment: self._truncate,
            wc.DeleteSegment: self._delete,
            wc.MergeSegments: self._merge,
            wc.UpdateSegmentPolicy: self._update_policy,
            wc.GetSegmentAttribute: self._get_attribute,
            wc.UpdateSegmentAttribute: self._update_attribute,
            wc.CreateTableSegment: self._create_table,
            wc.DeleteTableSegment: self._delete_table,
            wc.UpdateTableEntries: self._update_table,
            wc.RemoveTableKeys: self._remove_keys,
            wc.ReadTable: self._read_table,
            wc.ReadTableKeys: self._read_table_keys,
            wc.ReadTableEntries: self._read_table_entries,
            wc.ReadTableEntriesDelta: self._read_table_delta,
        }

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0 picks a free port); return the bound port."""
        self._server = await asyncio.start_server(self._serve, host, port)
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening and close every connection."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        conn = _Connection(writer)
        peer = writer.get_extra_info("peername")
        try:
            while True:
                try:
                    header = await reader.readexactly(wc.HEADER_SIZE)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                type_code, length = wc.parse_header(header)
                body = await reader.readexactly(length)
                if type_code not in wc.COMMANDS:
                    _LOG.warning(
                        "unknown wire command type %d (%d bytes) from %s; closing", type_code, length, peer
                    )
                    return
                command = wc.decode(type_code, body)
                handler = self._handlers.get(type(command))
                if handler is None:
                    _LOG.warning("unsupported wire command %s from %s", type(command).__name__, peer)
                    request_id = getattr(command, "request_id", -1)
                    conn.send(wc.OperationUnsupported(request_id, type(command).__name__, ""))
                    continue
                if isinstance(command, wc.ReadSegment):
                    conn.spawn(self._read_segment(conn, command))
                    continue
                _LOG.debug("%s <- %s", peer, command)
                try:
                    handler(conn, command)
                except SegmentError as exc:
                    conn.send(_error_reply(command, exc))
                await conn.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except wc.WireProtocolError as exc:
            _LOG.warning("protocol error from %s: %s; closing", peer, exc)
        except asyncio.CancelledError:
            pass
        except Exception:
            _LOG.exception("segment store connection from %s failed", peer)
        finally:
            self._connections.discard(task)
            conn.close()

    # ---- connection ---------------------------------------------------------------------

    def _hello(self, conn: _Connection, cmd: Any) -> None:
        if cmd.high_version < wc.OLDEST_COMPATIBLE_VERSION:
            _LOG.warning(
                "client wire version %d is older than %d", cmd.high_version, wc.OLDEST_COMPATIBLE_VERSION
            )
        conn.send(wc.Hello(wc.WIRE_VERSION, wc.OLDEST_COMPATIBLE_VERSION))

    def _keep_alive(self, conn: _Connection, cmd: Any) -> None:
        conn.send(wc.KeepAlive())

    # ---- appends ------------------------------------------------------------------------

    def _setup_append(self, conn: _Connection, cmd: Any) -> None:
        # A sealed segment still answers AppendSetup, as the real store does: the first append then
        # gets SegmentIsSealed, which sends the Rust writer to the successors. Refusing the setup
        # instead makes that writer panic ("must have connection").
        segment = self.storage.get(cmd.segment)
        conn.writers[cmd.writer_id] = cmd.segment
        conn.pending[cmd.writer_id] = bytearray()
        last = segment.writers.get(cmd.writer_id, NULL_ATTRIBUTE_VALUE)
        conn.send(wc.AppendSetup(cmd.request_id, cmd.segment, cmd.writer_id, last))

    def _writer_segment(self, conn: _Connection, writer_id: int) -> str:
        name = conn.writers.get(writer_id)
        if name is None:
            raise wc.WireProtocolError(f"append from writer {writer_id:x} without SetupAppend")
        return name

    def _append_block(self, conn: _Connection, cmd: Any) -> None:
        self._writer_segment(conn, cmd.writer_id)
        conn.pending[cmd.writer_id] += cmd.data

    def _append_block_end(self, conn: _Connection, cmd: Any) -> None:
        name = self._writer_segment(conn, cmd.writer_id)
        data = bytes(conn.pending.pop(cmd.writer_id, b"")) + cmd.data
        conn.pending[cmd.writer_id] = bytearray()
        self._append(conn, name, cmd.writer_id, cmd.last_event_number, cmd.request_id, data, None)

    def _conditional_append(self, conn: _Connection, cmd: Any) -> None:
        name = self._writer_segment(conn, cmd.writer_id)
        self._append(
            conn,
            name,
            cmd.writer_id,
            cmd.event_number,
            cmd.request_id,
            wc.frame_event(cmd.event),
            cmd.expected_offset,
        )

    def _conditional_block_end(self, conn: _Connection, cmd: Any) -> None:
        name = self._writer_segment(conn, cmd.writer_id)
        self._append(
            conn, name, cmd.writer_id, cmd.event_number, cmd.request_id, cmd.data, cmd.expected_offset
        )

    def _append(
        self,
        conn: _Connection,
        name: str,
        writer_id: int,
        event_number: int,
        request_id: int,
        data: bytes,
        expected_offset: int | None,
    ) -> None:
        try:
            segment = self.storage.get(name)
        except NoSuchSegmentError:
            conn.send(wc.NoSuchSegment(request_id, name, "", -1))
            return
        if segment.sealed:
            conn.send(wc.SegmentIsSealed(request_id, name, "", segment.length))
            return
        previous = segment.writers.get(writer_id, NULL_ATTRIBUTE_VALUE)
        if event_number <= previous:  # a retransmission after reconnecting: already stored
            conn.send(wc.DataAppended(writer_id, event_number, previous, request_id, segment.length))
            return
        if expected_offset is not None and expected_offset != segment.length:
            conn.send(wc.ConditionalCheckFailed(writer_id, event_number, request_id))
            return
        self.storage.append(segment, data)
        segment.writers[writer_id] = event_number
        conn.send(wc.DataAppended(writer_id, event_number, previous, request_id, segment.length))

    # ---- reads and segment metadata ------------------------------------------------------

    async def _read_segment(self, conn: _Connection, cmd: Any) -> None:
        name = cmd.segment
        try:
            segment = self.storage.get(name)
        except NoSuchSegmentError:
            conn.send(wc.NoSuchSegment(cmd.request_id, name, "", cmd.offset))
            return
        if cmd.offset < segment.start_offset:
            conn.send(wc.SegmentIsTruncated(cmd.request_id, name, segment.start_offset, "", cmd.offset))
            return
        if cmd.offset > segment.length:
            conn.send(
                wc.ErrorMessage(cmd.request_id, name, f"read offset {cmd.offset} beyond {segment.length}", 0)
            )
            return
        await segment.wait_for_data(cmd.offset, self.tail_wait)
        if self.storage.segments.get(name) is not segment:  # deleted while waiting
            conn.send(wc.NoSuchSegment(cmd.request_id, name, "", cmd.offset))
            return
        if cmd.offset < segment.start_offset:
            conn.send(wc.SegmentIsTruncated(cmd.request_id, name, segment.start_offset, "", cmd.offset))
            return
        size = max(1, min(cmd.suggested_length, MAX_READ_SIZE))
        data = segment.data[cmd.offset : cmd.offset + size]  # a copy: appends may follow
        end = cmd.offset + len(data)
        at_tail = end >= segment.length
        end_of_segment = at_tail and segment.sealed
        if end_of_segment and not data:
            at_tail = False  # as Pravega answers a read at the end of a sealed segment
        conn.send(wc.SegmentRead(name, cmd.offset, at_tail, end_of_segment, data, cmd.request_id))
        await conn.drain()

    def _get_info(self, conn: _Connection, cmd: Any) -> None:
        segment = self.storage.segments.get(cmd.segment_name)
        if segment is None:
            conn.send(wc.NoSuchSegment(cmd.request_id, cmd.segment_name, "", -1))
            return
        conn.send(
            wc.StreamSegmentInfo(
                cmd.request_id,
                cmd.segment_name,
                True,
                segment.sealed,
                False,
                segment.last_modified,
                segment.length,
                segment.start_offset,
            )
        )

    def _create_segment(self, conn: _Connection, cmd: Any) -> None:
        self.storage.create(cmd.segment)
        conn.send(wc.SegmentCreated(cmd.request_id, cmd.segment))

    def _create_transient(self, conn: _Connection, cmd: Any) -> None:
        parent = self.storage.get(cmd.segment)
        if parent.sealed:
            raise SegmentSealedError(cmd.segment)
        name = f"{cmd.segment}{_TRANSIENT_DELIMITER}{cmd.writer_id:032x}"
        if name in self.storage.segments:
            self.storage.delete(name)
        self.storage.create(name)
        conn.send(wc.SegmentCreated(cmd.request_id, name))

    def _seal(self, conn: _Connection, cmd: Any) -> None:
        self.storage.seal(cmd.segment)
        conn.send(wc.SegmentSealed(cmd.request_id, cmd.segment))

    def _truncate(self, conn: _Connection, cmd: Any) -> None:
        self.storage.truncate(cmd.segment, cmd.truncation_offset)
        conn.send(wc.SegmentTruncated(cmd.request_id, cmd.segment))

    def _delete(self, conn: _Connection, cmd: Any) -> None:
        self.storage.delete(cmd.segment)
        conn.send(wc.SegmentDeleted(cmd.request_id, cmd.segment))

    def _merge(self, conn: _Connection, cmd: Any) -> None:
        target = self.storage.get(cmd.target)
        if target.sealed:
            raise SegmentSealedError(cmd.target)
        length = self.storage.merge(cmd.target, cmd.source)
        conn.send(wc.SegmentsMerged(cmd.request_id, cmd.target, cmd.source, length))

    def _update_policy(self, conn: _Connection, cmd: Any) -> None:
        self.storage.get(cmd.segment)
        conn.send(wc.SegmentPolicyUpdated(cmd.request_id, cmd.segment))

    def _get_attribute(self, conn: _Connection, cmd: Any) -> None:
        segment = self.storage.get(cmd.segment_name)
        conn.send(
            wc.SegmentAttribute(
                cmd.request_id, segment.attributes.get(cmd.attribute_id, NULL_ATTRIBUTE_VALUE)
            )
        )

    def _update_attribute(self, conn: _Connection, cmd: Any) -> None:
        segment = self.storage.get(cmd.segment_name)
        current = segment.attributes.get(cmd.attribute_id, NULL_ATTRIBUTE_VALUE)
        success = current == cmd.expected_value
        if success:
            segment.attributes[cmd.attribute_id] = cmd.new_value
            self.storage.mark_dirty()
        conn.send(wc.SegmentAttributeUpdated(cmd.request_id, success))

    # ---- table segments -----------------------------------------------------------------

    def _create_table(self, conn: _Connection, cmd: Any) -> None:
        self.storage.create_table(cmd.segment)
        conn.send(wc.SegmentCreated(cmd.request_id, cmd.segment))

    def _delete_table(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        if cmd.must_be_empty and len(table):
            conn.send(wc.TableSegmentNotEmpty(cmd.request_id, cmd.segment, ""))
            return
        self.storage.delete_table(cmd.segment)
        conn.send(wc.SegmentDeleted(cmd.request_id, cmd.segment))

    def _update_table(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        entries = [(key.data, key.version, value.data) for key, value in cmd.table_entries]
        try:
            versions = table.update(entries, cmd.table_segment_offset)
        except TableError as exc:
            conn.send(_table_error(cmd, exc))
            return
        self.storage.mark_dirty()
        conn.send(wc.TableEntriesUpdated(cmd.request_id, tuple(versions)))

    def _remove_keys(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        try:
            table.remove([(key.data, key.version) for key in cmd.keys], cmd.table_segment_offset)
        except TableError as exc:
            conn.send(_table_error(cmd, exc))
            return
        self.storage.mark_dirty()
        conn.send(wc.TableKeysRemoved(cmd.request_id, cmd.segment))

    def _read_table(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        entries = []
        for key in cmd.keys:
            found = table.get(key.data)
            if found is None:
                entries.append((wc.TableKey(key.data, wc.KEY_NOT_EXISTS), wc.TableValue(b"")))
            else:
                entries.append((wc.TableKey(key.data, found[1]), wc.TableValue(found[0])))
        conn.send(wc.TableRead(cmd.request_id, cmd.segment, tuple(entries)))

    def _read_table_keys(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        keys, token = table.keys_page(cmd.continuation_token, cmd.suggested_key_count)
        conn.send(
            wc.TableKeysRead(cmd.request_id, cmd.segment, tuple(wc.TableKey(k, v) for k, v in keys), token)
        )

    def _read_table_entries(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        entries, token = table.entries_page(cmd.continuation_token, cmd.suggested_entry_count)
        conn.send(wc.TableEntriesRead(cmd.request_id, cmd.segment, _entries(entries), token))

    def _read_table_delta(self, conn: _Connection, cmd: Any) -> None:
        table = self.storage.get_table(cmd.segment)
        entries, reached_end, position = table.delta(cmd.from_position, cmd.suggested_entry_count)
        conn.send(
            wc.TableEntriesDeltaRead(
                cmd.request_id, cmd.segment, _entries(entries), False, reached_end, position
            )
        )


class _Connection:
    """One client connection: its writer stream, appending writers and in-flight read tasks."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.writers: dict[int, str] = {}  # writer id -> segment set up on this connection
        self.pending: dict[int, bytearray] = {}  # AppendBlock data awaiting its AppendBlockEnd
        self._tasks: set[asyncio.Task[None]] = set()

    def send(self, command: wc.WireCommand) -> None:
        if not self._writer.is_closing():
            self._writer.writelines(wc.encode_parts(command))

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._guard(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception:
            _LOG.exception("read task failed")

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()


def _entries(items: list[tuple[bytes, bytes, int]]) -> tuple[tuple[wc.TableKey, wc.TableValue], ...]:
    return tuple((wc.TableKey(k, version), wc.TableValue(v)) for k, v, version in items)


def _table_error(cmd: Any, exc: TableError) -> wc.WireCommand:
    if isinstance(exc, KeyNotFoundError):
        return wc.TableKeyDoesNotExist(cmd.request_id, cmd.segment, str(exc))
    if isinstance(exc, BadKeyVersionError):
        return wc.TableKeyBadVersion(cmd.request_id, cmd.segment, str(exc))
    return wc.TableKeyBadVersion(cmd.request_id, cmd.segment, str(exc))  # bad table offset


def _error_reply(cmd: Any, exc: SegmentError) -> wc.WireCommand:
    request_id = getattr(cmd, "request_id", -1)
    if isinstance(exc, NoSuchSegmentError):
        return wc.NoSuchSegment(request_id, exc.segment, "", -1)
    if isinstance(exc, SegmentSealedError):
        return wc.SegmentIsSealed(request_id, exc.segment, "", -1)
    if isinstance(exc, SegmentExistsError):
        return wc.SegmentAlreadyExists(request_id, exc.segment, "")
    if isinstance(exc, BadOffsetError):
        return wc.ErrorMessage(request_id, exc.segment, str(exc), 0)
    return wc.ErrorMessage(request_id, exc.segment, str(exc), 0)
