"""gRPC adapter of the orchestrator: AskStream, Ask and Retrieve over the question flow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import grpc
from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc

from weaverbird_orchestrator import convert
from weaverbird_orchestrator.deadline import caller_deadline
from weaverbird_orchestrator.domain import AskParams, PromptPrepared, RouteDecision, Stage
from weaverbird_orchestrator.events import CitationsEvent, DoneEvent, FurtherReadingEvent, TokenEvent
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.metrics import record_question
from weaverbird_orchestrator.validation import validate_ask


class OrchestratorServicer(orchestrator_pb2_grpc.OrchestratorServiceServicer):
    """Translates requests to `AskParams` and flow events to `AskEvent` messages.

    Every call runs under its caller's deadline (deadline.caller_deadline), so each hop made for it
    (embed, search, web, generate) gets min(its fixed timeout, the time left)."""

    def __init__(self, flow: QuestionFlow) -> None:
        self._flow = flow

    async def _params(self, request: orchestrator_pb2.AskRequest) -> AskParams:
        validate_ask(request, max_history_turns=self._flow.max_history_turns)
        return await self._flow.params(
            request.question,
            top_k=request.top_k if request.HasField("top_k") else None,
            top_j=request.top_j if request.HasField("top_j") else None,
            threshold=request.threshold if request.HasField("threshold") else None,
            filters=convert.request_filters(request),
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            conversation_id=request.conversation_id,
            history=convert.request_history(request),
            task=convert.request_task(request),
            json_keys=list(request.json_keys),
            max_rounds=request.max_rounds if request.HasField("max_rounds") else None,
            chart=request.chart if request.HasField("chart") else None,
            facts=request.facts if request.HasField("facts") else None,
        )

    async def _events(self, request: orchestrator_pb2.AskRequest) -> AsyncIterator[orchestrator_pb2.AskEvent]:
        """Each flow event as its proto."""
        params = await self._params(request)
        cited_count = 0
        # aclosing: when this stream stops early, the flow (and its generator call) is closed now, not
        # whenever the garbage collector finalises it.
        async with aclosing(self._flow.ask(params)) as events:
            async for event in events:
                if isinstance(event, RouteDecision):
                    yield orchestrator_pb2.AskEvent(route=convert.route_proto(event))
                elif isinstance(event, PromptPrepared):
                    yield orchestrator_pb2.AskEvent(prompt=convert.prompt_proto(event))
                elif isinstance(event, Stage):
                    yield orchestrator_pb2.AskEvent(stage=convert.stage_proto(event))
                elif isinstance(event, TokenEvent):
                    yield orchestrator_pb2.AskEvent(token=event.text)
                elif isinstance(event, CitationsEvent):
                    cited_count = len(event.passages)
                    citations = convert.citations_proto(event.passages, event.cited)
                    yield orchestrator_pb2.AskEvent(citations=orchestrator_pb2.CitationList(citations=citations))
                elif isinstance(event, FurtherReadingEvent):
                    further = convert.further_proto(event.passages, cited_count + 1)
                    yield orchestrator_pb2.AskEvent(further_reading=orchestrator_pb2.FurtherReading(passages=further))
                elif isinstance(event, DoneEvent):
                    record_question(event.decision)
                    done = convert.done_proto(
                        event.generation,
                        event.decision,
                        event.conversation_id,
                        event.answer_check,
                        event.unsupported_numbers,
                        event.answer_cites_passages,
                        event.replacement,
                        event.task,
                        event.extras,
                        event.replacement_reason,
                    )
                    yield orchestrator_pb2.AskEvent(done=done)

    async def AskStream(self, request: orchestrator_pb2.AskRequest, context: grpc.aio.ServicerContext) -> None:
        # context.write() rather than `yield`: a client that cancels (or whose deadline passes) then always
        # interrupts this coroutine, and leaving `aclosing` ends the flow and its generator call at once.
        with caller_deadline(context.time_remaining()):
            async with aclosing(self._events(request)) as events:
                async for proto in events:
                    await context.write(proto)

    async def Ask(
        self, request: orchestrator_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> orchestrator_pb2.AskResponse:
        with caller_deadline(context.time_remaining()):
            return await self._ask(request)

    async def _ask(self, request: orchestrator_pb2.AskRequest) -> orchestrator_pb2.AskResponse:
        response = orchestrator_pb2.AskResponse()
        answer: list[str] = []
        replacement = ""
        async for event in self._events(request):
            kind = event.WhichOneof("event")
            if kind == "route":
                response.route.CopyFrom(event.route)
            elif kind == "token":
                answer.append(event.token)
            elif kind == "citations":
                response.citations.extend(event.citations.citations)
            elif kind == "stage":
                response.stages.append(event.stage)
            elif kind == "further_reading":
                response.further_reading.extend(event.further_reading.passages)
            elif kind == "done":
                response.done.CopyFrom(event.done)
                replacement = event.done.replacement_answer
        # A withheld answer (its figures are in no cited passage) is replaced, as the stream's done says.
        response.answer = replacement or "".join(answer)
        response.answer_replaced = bool(replacement)
        response.answer_check = response.done.answer_check
        response.unsupported_numbers.extend(response.done.unsupported_numbers)
        response.task = response.done.task
        for name in ("calculation", "structured", "chart"):
            if response.done.HasField(name):
                getattr(response, name).CopyFrom(getattr(response.done, name))
        # The route's timings are final only once generation ended.
        response.route.timings.CopyFrom(response.done.timings)
        return response

    async def Retrieve(
        self, request: orchestrator_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> orchestrator_pb2.RetrieveResponse:
        with caller_deadline(context.time_remaining()):
            retrieval = await self._flow.retrieve(await self._params(request))
        record_question(retrieval.decision)
        return orchestrator_pb2.RetrieveResponse(
            route=convert.route_proto(retrieval.decision),
            passages=[convert.citation_proto(i, p) for i, p in enumerate(retrieval.ranked, start=1)],
        )
