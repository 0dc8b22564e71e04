"""The emulated controller: ``ControllerService`` over gRPC (grpc.aio), backed by :class:`Metadata`.

Handlers are built from the service descriptor in the project's one generated module,
:mod:`connectors.pravega._proto.controller_pb2` (the connector's controller client uses it too), and
bound to the methods of :class:`ControllerServicer` with the same names. A call to any other method of any
service is logged at WARNING and answered with ``UNIMPLEMENTED``.

Threading: grpc.aio runs the handlers on the emulator's asyncio loop, the same loop as the segment
store, so handlers touch the shared state without locks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import grpc

from connectors.pravega._proto import controller_pb2 as pb

from .metadata import (
    AlreadyExistsError,
    Metadata,
    NotFoundError,
    PreconditionError,
    Stream,
    StreamConfiguration,
    TxnState,
)

__all__ = ["ControllerServicer", "ControllerStub", "SERVICE_NAME", "build_server"]

_LOG = logging.getLogger(__name__)
SERVICE_NAME = "io.pravega.controller.stream.api.grpc.v1.ControllerService"
_PAGE = 100


def _txn_id(message: Any) -> int:
    return ((message.highBits & 0xFFFFFFFFFFFFFFFF) << 64) | (message.lowBits & 0xFFFFFFFFFFFFFFFF)


def _txn_message(txn_id: int) -> pb.TxnId:
    def signed(value: int) -> int:
        return value - (1 << 64) if value >= 1 << 63 else value

    return pb.TxnId(highBits=signed(txn_id >> 64), lowBits=signed(txn_id & 0xFFFFFFFFFFFFFFFF))


class ControllerServicer:
    """Implements the controller calls the official clients make (see ``connectors/pravega/_proto``)."""

    def __init__(
        self, metadata: Metadata, segment_store_host: str, segment_store_port: int, controller_port: int = 0
    ) -> None:
        self.metadata = metadata
        self.host = segment_store_host
        self.port = segment_store_port
        self.controller_port = controller_port

    # ---- helpers -----------------------------------------------------------------------

    def _stream_info(self, stream: Stream) -> pb.StreamInfo:
        return pb.StreamInfo(scope=stream.scope, stream=stream.name)

    def _range(self, stream: Stream, seg_id: int) -> pb.SegmentRange:
        record = stream.segments[seg_id]
        return pb.SegmentRange(
            segmentId=pb.SegmentId(streamInfo=self._stream_info(stream), segmentId=seg_id),
            minKey=record.min_key,
            maxKey=record.max_key,
        )

    def _find(self, info: Any) -> Stream:
        return self.metadata.stream(info.scope, info.stream)

    @staticmethod
    def _config(message: Any) -> StreamConfiguration:
        scaling = message.scalingPolicy
        retention = message.retentionPolicy
        return StreamConfiguration(
            scale_type=int(scaling.scaleType),
            target_rate=scaling.targetRate,
            scale_factor=scaling.scaleFactor,
            min_segments=max(scaling.minNumSegments, 1),
            retention_type=int(retention.retentionType),
            retention_param=retention.retentionParam,
            retention_max=retention.retentionMax,
            tags=list(message.tags.tag),
        )

    # ---- cluster -----------------------------------------------------------------------

    async def getControllerServerList(self, request: Any, context: Any) -> Any:
        """This controller, the only one."""
        return pb.ServerResponse(nodeURI=[pb.NodeUri(endpoint=self.host, port=self.controller_port)])

    async def getDelegationToken(self, request: Any, context: Any) -> Any:
        """An empty token: the emulator has no authentication."""
        return pb.DelegationToken(delegationToken="")

    # ---- scopes ------------------------------------------------------------------------

    async def createScope(self, request: Any, context: Any) -> Any:
        """Create a scope (SCOPE_EXISTS if present)."""
        status = pb.CreateScopeStatus
        try:
            self.metadata.create_scope(request.scope)
        except AlreadyExistsError:
            return status(status=status.SCOPE_EXISTS)
        except PreconditionError:
            return status(status=status.INVALID_SCOPE_NAME)
        return status(status=status.SUCCESS)

    async def deleteScope(self, request: Any, context: Any) -> Any:
        """Delete an empty scope."""
        status = pb.DeleteScopeStatus
        try:
            self.metadata.delete_scope(request.scope)
        except NotFoundError:
            return status(status=status.SCOPE_NOT_FOUND)
        except PreconditionError:
            return status(status=status.SCOPE_NOT_EMPTY)
        return status(status=status.SUCCESS)

    async def checkScopeExists(self, request: Any, context: Any) -> Any:
        """Whether the scope exists."""
        return pb.ExistsResponse(exists=request.scope in self.metadata.scopes)

    async def listScopes(self, request: Any, context: Any) -> Any:
        """Scopes by page; an empty page ends the listing."""
        names = sorted(self.metadata.scopes)
        page, token = _paginate(names, request.continuationToken.token)
        return pb.ScopesResponse(scopes=page, continuationToken=pb.ContinuationToken(token=token))

    # ---- streams -----------------------------------------------------------------------

    async def createStream(self, request: Any, context: Any) -> Any:
        """Create a stream with ``minNumSegments`` segments; the scaling policy is recorded only."""
        status = pb.CreateStreamStatus
        info = request.streamInfo
        try:
            self.metadata.create_stream(info.scope, info.stream, self._config(request))
        except AlreadyExistsError:
            return status(status=status.STREAM_EXISTS)
        except NotFoundError:
            return status(status=status.SCOPE_NOT_FOUND)
        except PreconditionError:
            return status(status=status.INVALID_STREAM_NAME)
        return status(status=status.SUCCESS)

    async def updateStream(self, request: Any, context: Any) -> Any:
        """Record a new configuration."""
        status = pb.UpdateStreamStatus
        info = request.streamInfo
        try:
            self.metadata.update_stream(info.scope, info.stream, self._config(request))
        except NotFoundError:
            return status(status=status.STREAM_NOT_FOUND)
        return status(status=status.SUCCESS)

    async def truncateStream(self, request: Any, context: Any) -> Any:
        """Truncate at a stream cut (segment id -> offset)."""
        status = pb.UpdateStreamStatus
        info = request.streamInfo
        try:
            self.metadata.truncate(info.scope, info.stream, dict(request.cut))
        except NotFoundError:
            return status(status=status.STREAM_NOT_FOUND)
        except (PreconditionError, Exception) as exc:  # an invalid cut
            _LOG.warning("truncateStream %s/%s failed: %s", info.scope, info.stream, exc)
            return status(status=status.FAILURE)
        return status(status=status.SUCCESS)

    async def sealStream(self, request: Any, context: Any) -> Any:
        """Seal all active segments."""
        status = pb.UpdateStreamStatus
        try:
            self.metadata.seal_stream(request.scope, request.stream)
        except NotFoundError:
            return status(status=status.STREAM_NOT_FOUND)
        return status(status=status.SUCCESS)

    async def deleteStream(self, request: Any, context: Any) -> Any:
        """Delete a sealed stream."""
        status = pb.DeleteStreamStatus
        try:
            self.metadata.delete_stream(request.scope, request.stream)
        except NotFoundError:
            return status(status=status.STREAM_NOT_FOUND)
        except PreconditionError:
            return status(status=status.STREAM_NOT_SEALED)
        return status(status=status.SUCCESS)

    async def checkStreamExists(self, request: Any, context: Any) -> Any:
        """Whether the stream exists."""
        try:
            self._find(request)
        except NotFoundError:
            return pb.ExistsResponse(exists=False)
        return pb.ExistsResponse(exists=True)

    async def getStreamConfiguration(self, request: Any, context: Any) -> Any:
        """The recorded configuration, including tags."""
        try:
            stream = self._find(request)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        config = stream.config
        return pb.StreamConfig(
            streamInfo=self._stream_info(stream),
            scalingPolicy=pb.ScalingPolicy(
                scaleType=config.scale_type,
                targetRate=config.target_rate,
                scaleFactor=config.scale_factor,
                minNumSegments=config.min_segments,
            ),
            retentionPolicy=pb.RetentionPolicy(
                retentionType=config.retention_type,
                retentionParam=config.retention_param,
                retentionMax=config.retention_max,
            ),
            tags=pb.Tags(tag=config.tags),
        )

    async def listStreamsInScope(self, request: Any, context: Any) -> Any:
        """Streams of a scope by page (internal streams starting with ``_`` are hidden)."""
        return self._list_streams(request.scope.scope, None, request.continuationToken.token)

    async def listStreamsInScopeForTag(self, request: Any, context: Any) -> Any:
        """Streams of a scope carrying a tag, by page."""
        return self._list_streams(request.scope.scope, request.tag, request.continuationToken.token)

    def _list_streams(self, scope: str, tag: str | None, token: str) -> Any:
        response = pb.StreamsInScopeResponse
        streams = self.metadata.scopes.get(scope)
        if streams is None:
            return response(status=response.SCOPE_NOT_FOUND)
        names = sorted(
            name
            for name, stream in streams.items()
            if not name.startswith("_") and (tag is None or tag in stream.config.tags)
        )
        page, next_token = _paginate(names, token)
        return response(
            streams=[pb.StreamInfo(scope=scope, stream=name) for name in page],
            continuationToken=pb.ContinuationToken(token=next_token),
            status=response.SUCCESS,
        )

    # ---- segments ----------------------------------------------------------------------

    async def getCurrentSegments(self, request: Any, context: Any) -> Any:
        """Segments of the latest epoch with their key ranges."""
        try:
            stream = self._find(request)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        return pb.SegmentRanges(segmentRanges=[self._range(stream, r.id) for r in stream.active()])

    async def getEpochSegments(self, request: Any, context: Any) -> Any:
        """Segments of a given epoch."""
        try:
            stream = self._find(request.streamInfo)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        if not 0 <= request.epoch < len(stream.epochs):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"epoch {request.epoch} does not exist")
        return pb.SegmentRanges(segmentRanges=[self._range(stream, i) for i in stream.epochs[request.epoch]])

    async def getSegments(self, request: Any, context: Any) -> Any:
        """Where to start reading at a time; timestamp 0 gives the head (truncation point)."""
        try:
            stream = self._find(request.streamInfo)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        cut = self.metadata.segments_at(stream, request.timestamp)
        location = pb.SegmentsAtTime.SegmentLocation
        return pb.SegmentsAtTime(
            segments=[
                location(
                    segmentId=pb.SegmentId(streamInfo=self._stream_info(stream), segmentId=seg), offset=offset
                )
                for seg, offset in sorted(cut.items())
            ]
        )

    async def getSegmentsImmediatelyFollowing(self, request: Any, context: Any) -> Any:
        """Successors of a sealed segment, each with all its predecessors."""
        try:
            stream = self._find(request.streamInfo)
            successors = self.metadata.successors(stream, request.segmentId)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        entry = pb.SuccessorResponse.SegmentEntry
        return pb.SuccessorResponse(
            segments=[
                entry(segment=self._range(stream, record.id), value=preds) for record, preds in successors
            ]
        )

    async def getSegmentsImmediatlyFollowing(self, request: Any, context: Any) -> Any:
        """The deprecated, misspelt name of getSegmentsImmediatelyFollowing."""
        return await self.getSegmentsImmediatelyFollowing(request, context)

    async def getSegmentsBetween(self, request: Any, context: Any) -> Any:
        """Segments holding data between two stream cuts (empty ``from``: head; empty ``to``: tail)."""
        try:
            stream = self._find(request.streamInfo)
            ids = self.metadata.segments_between(stream, dict(getattr(request, "from")), dict(request.to))
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        info = self._stream_info(stream)
        return pb.StreamCutRangeResponse(segments=[pb.SegmentId(streamInfo=info, segmentId=i) for i in ids])

    async def getURI(self, request: Any, context: Any) -> Any:
        """The segment store endpoint (one store owns every segment)."""
        return pb.NodeUri(endpoint=self.host, port=self.port)

    async def isSegmentValid(self, request: Any, context: Any) -> Any:
        """Whether the segment is active."""
        try:
            stream = self._find(request.streamInfo)
        except NotFoundError:
            return pb.SegmentValidityResponse(response=False)
        return pb.SegmentValidityResponse(
            response=request.segmentId in stream.epochs[-1] and not stream.sealed
        )

    async def isStreamCutValid(self, request: Any, context: Any) -> Any:
        """Whether every segment of the cut belongs to the stream."""
        try:
            stream = self._find(request.streamInfo)
        except NotFoundError:
            return pb.StreamCutValidityResponse(response=False)
        ok = all(seg in stream.segments for seg in request.cut)
        return pb.StreamCutValidityResponse(response=ok)

    async def scale(self, request: Any, context: Any) -> Any:
        """Scale synchronously: STARTED, already complete, with the epoch the scale started from.

        As on Pravega's controller, a scale that would leave fewer segments than the stream's
        minimum (its scaling policy's ``minNumSegments``) is PRECONDITION_FAILED; the emulator's
        private control interface does not check this.
        """
        response = pb.ScaleResponse
        info = request.streamInfo
        ranges = [(entry.start, entry.end) for entry in request.newKeyRanges]
        try:
            stream = self._find(info)
            remaining = len(stream.epochs[-1]) - len(set(request.sealedSegments)) + len(ranges)
            if remaining < stream.config.min_segments:
                raise PreconditionError(
                    f"scale would leave {remaining} segments, below the minimum {stream.config.min_segments}"
                )
            epoch = self.metadata.scale(info.scope, info.stream, list(request.sealedSegments), ranges)
        except NotFoundError:
            return response(status=response.FAILURE)
        except PreconditionError as exc:
            _LOG.info("scale refused: %s", exc)
            return response(status=response.PRECONDITION_FAILED)
        new = [self._range(stream, seg) for seg in stream.epochs[epoch] if seg >> 32 == epoch]
        return response(status=response.STARTED, segments=new, epoch=epoch - 1)

    async def checkScale(self, request: Any, context: Any) -> Any:
        """SUCCESS for an existing epoch (the scale from it is done: scaling is synchronous here)."""
        status = pb.ScaleStatusResponse
        try:
            stream = self._find(request.streamInfo)
        except NotFoundError:
            return status(status=status.INVALID_INPUT)
        if not 0 <= request.epoch < len(stream.epochs):
            return status(status=status.INVALID_INPUT)
        return status(status=status.SUCCESS)  # scaling is synchronous here

    # ---- transactions ------------------------------------------------------------------

    async def createTransaction(self, request: Any, context: Any) -> Any:
        """Open a transaction on the current epoch and create its segments."""
        info = request.streamInfo
        try:
            txn = self.metadata.create_transaction(info.scope, info.stream, request.lease)
        except NotFoundError as exc:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(exc))
        except PreconditionError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        stream = self._find(info)
        return pb.CreateTxnResponse(
            txnId=_txn_message(txn.id), activeSegments=[self._range(stream, seg) for seg in txn.segments]
        )

    async def commitTransaction(self, request: Any, context: Any) -> Any:
        """Merge the transaction segments into their parents; COMMITTED at once."""
        return self._end_transaction(request, commit=True)

    async def abortTransaction(self, request: Any, context: Any) -> Any:
        """Drop the transaction segments."""
        return self._end_transaction(request, commit=False)

    def _end_transaction(self, request: Any, commit: bool) -> Any:
        status = pb.TxnStatus
        info = request.streamInfo
        txn_id = _txn_id(request.txnId)
        try:
            if commit:
                self.metadata.commit_transaction(info.scope, info.stream, txn_id)
            else:
                self.metadata.abort_transaction(info.scope, info.stream, txn_id)
        except NotFoundError as exc:
            is_stream = info.scope in self.metadata.scopes and info.stream in self.metadata.scopes[info.scope]
            _LOG.info("%s: %s", "commit" if commit else "abort", exc)
            return status(status=status.TRANSACTION_NOT_FOUND if is_stream else status.STREAM_NOT_FOUND)
        except PreconditionError as exc:
            _LOG.warning("%s refused: %s", "commit" if commit else "abort", exc)
            return status(status=status.FAILURE)
        return status(status=status.SUCCESS)

    async def pingTransaction(self, request: Any, context: Any) -> Any:
        """Renew the lease (recorded, not enforced) and report the state."""
        status = pb.PingTxnStatus
        info = request.streamInfo
        try:
            txn = self.metadata.transaction(info.scope, info.stream, _txn_id(request.txnId))
        except NotFoundError:
            return status(status=status.UNKNOWN)
        txn.lease_ms = request.lease
        mapping = {
            TxnState.OPEN: status.OK,
            TxnState.COMMITTING: status.COMMITTED,
            TxnState.COMMITTED: status.COMMITTED,
            TxnState.ABORTING: status.ABORTED,
            TxnState.ABORTED: status.ABORTED,
        }
        return status(status=mapping[txn.state])

    async def checkTransactionState(self, request: Any, context: Any) -> Any:
        """The transaction state."""
        info = request.streamInfo
        try:
            txn = self.metadata.transaction(info.scope, info.stream, _txn_id(request.txnId))
        except NotFoundError:
            return pb.TxnState(state=pb.TxnState.UNKNOWN)
        return pb.TxnState(state=txn.state.value)

    # ---- writers -----------------------------------------------------------------------

    async def noteTimestampFromWriter(self, request: Any, context: Any) -> Any:
        """Accepted and ignored (no watermarks)."""
        return pb.TimestampResponse(result=pb.TimestampResponse.SUCCESS)

    async def removeWriter(self, request: Any, context: Any) -> Any:
        """Accepted and ignored."""
        return pb.RemoveWriterResponse(result=pb.RemoveWriterResponse.SUCCESS)


def _paginate(names: list[str], token: str) -> tuple[list[str], str]:
    start = int(token) if token.isdigit() else 0
    page = names[start : start + _PAGE]
    return page, str(start + len(page))


class _Fallback(grpc.GenericRpcHandler):
    """Answers every method nobody else handles with UNIMPLEMENTED, after a WARNING."""

    def service(self, handler_call_details: Any) -> Any:
        method = handler_call_details.method

        async def unimplemented(request: bytes, context: Any) -> bytes:
            _LOG.warning("UNIMPLEMENTED controller method called: %s", method)
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{method} is not implemented by the emulator")
            return b""

        return grpc.unary_unary_rpc_method_handler(unimplemented)


def _logged(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    async def call(request: Any, context: Any) -> Any:
        _LOG.debug("controller %s(%s)", name, str(request).replace("\n", " "))
        try:
            return await method(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception:
            _LOG.exception("controller %s failed", name)
            raise

    return call


def _service_methods() -> list[tuple[str, Any, Any]]:
    """``(name, request class, response class)`` of every method of the controller service."""
    service = pb.DESCRIPTOR.services_by_name["ControllerService"]
    methods = []
    for method in service.methods:
        request_cls = (
            getattr(pb, method.input_type.name) if method.input_type.containing_type is None else None
        )
        assert request_cls is not None, method.full_name
        methods.append((method.name, request_cls, getattr(pb, method.output_type.name)))
    return methods


class ControllerStub:
    """A blocking client of every method of the controller service (for tests), built from the descriptor.

    ``stub.createScope(pb.ScopeInfo(scope="s"))`` calls ``/<SERVICE_NAME>/createScope`` on ``channel``
    and returns the decoded reply, as a ``protoc --grpc_python_out`` stub would.
    """

    def __init__(self, channel: grpc.Channel) -> None:
        for name, request_cls, response_cls in _service_methods():
            call = channel.unary_unary(
                f"/{SERVICE_NAME}/{name}",
                request_serializer=request_cls.SerializeToString,
                response_deserializer=response_cls.FromString,
            )
            setattr(self, name, call)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the controller service has no method {name!r}")


def build_server(servicer: ControllerServicer) -> grpc.aio.Server:
    """A grpc.aio server with the controller service and the UNIMPLEMENTED fallback registered."""
    handlers = {}
    for name, request_cls, response_cls in _service_methods():
        handlers[name] = grpc.unary_unary_rpc_method_handler(
            _logged(name, getattr(servicer, name)),
            request_deserializer=request_cls.FromString,
            response_serializer=response_cls.SerializeToString,
        )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE_NAME, handlers), _Fallback())
    )
    return server
