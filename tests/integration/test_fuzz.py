"""Fuzzes every RPC of every service in the running stack: bad input must get a clear status, never a crash.

For each method a few hundred requests are sent as raw bytes through a generic channel method:
random messages built from the method's descriptor (NaN, infinities, huge and negative numbers,
unknown enum values, unicode, empty and oversized strings and batches, SSRF-bait URLs), mutations
of their encodings, random bytes, and random well-formed wire data with unknown or mistyped fields.
Every answer must be OK or a deliberate status (INVALID_ARGUMENT, FAILED_PRECONDITION, ...):
never INTERNAL or UNKNOWN, and never a message showing a traceback or Python class and module
names. Afterwards every service must still report SERVING and answer a normal question.

Reproducible: every case is drawn from `random.Random(f"{SEED}:{method}:{i}")`; a failure names
its case, and WEAVERBIRD_FUZZ_SEED / WEAVERBIRD_FUZZ_CASES change the seed and the count.

Requests that would pass validation are steered away from work that would slow the suite or change
the shared knowledge base: orchestrator calls search the local KB only (filter origin LOCAL, so no
web search and no Kafka publishing), Ask/AskStream ask with c = 1 so the route ends in the refusal
without a model call, only a few generator requests reach the LLM (max_tokens 1), and chunks and
documents that would be stored get fuzz-only ids and are deleted at the end.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest
from fixtures.proto_fuzz import (
    Ctx,
    mutate,
    random_message,
    random_wire,
    template,
    tweak,
)
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from weaverbird.v1 import (
    common_pb2,
    embedder_pb2,
    generator_pb2,
    ingester_pb2,
    orchestrator_pb2,
    orchestrator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_cli.stack import SERVICES, LocalStack
from weaverbird_common.docs.loaders import document_id_for
from weaverbird_common.errors import InvalidArgument
from weaverbird_generator.validation import validate_generate
from weaverbird_retriever.validation import validate_upsert

pytestmark = pytest.mark.integration

SEED = int(os.environ.get("WEAVERBIRD_FUZZ_SEED", "20261123"))
CASES = int(os.environ.get("WEAVERBIRD_FUZZ_CASES", "200"))
# Deliberate answers to bad input or load; INTERNAL and UNKNOWN mean something was not handled.
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
# What a user must never see: a traceback, a Python class or module, a source file.
LEAK = re.compile(
    r"Traceback|<class |File \"|weaverbird_[a-z]+|\b[a-z_]+\.py\b|\b[A-Z][A-Za-z]+(Error|Exception)\b|pydantic"
)

# ---------------------------------------------------------------------------------------------
# Steering: keep valid requests cheap and the shared KB unchanged
# ---------------------------------------------------------------------------------------------

Sanitize = Callable[[Message, int, Ctx], Message]


def _local_only(msg: orchestrator_pb2.AskRequest, case: int, ctx: Ctx) -> Message:
    msg.filter.origin = common_pb2.ORIGIN_LOCAL  # no web search, nothing published to Kafka
    return msg


def _local_refusal(msg: orchestrator_pb2.AskRequest, case: int, ctx: Ctx) -> Message:
    _local_only(msg, case, ctx)
    msg.threshold = 1.0  # local evidence never reaches c = 1, web is skipped: refusal without a model call
    return msg


def _cheap_generation(msg: generator_pb2.GenerateRequest, case: int, ctx: Ctx) -> Message:
    try:
        validate_generate(msg, max_question_chars=4000, max_passages=20)
    except InvalidArgument:
        return msg
    if ctx.valid_generations < 3:
        ctx.valid_generations += 1
        msg.sampling.max_tokens = 1
    else:
        msg.language = "fr"  # refused: the LLM stays out of the rest of the run
    return msg


def _fuzz_chunks(msg: retriever_pb2.UpsertRequest, case: int, ctx: Ctx) -> Message:
    try:
        dimension = validate_upsert(msg, max_batch=1024)
    except InvalidArgument:
        return msg
    if dimension != ctx.dimension:
        return msg
    for j, chunk in enumerate(msg.chunks):
        document_id = f"fuzz-{SEED}-{case}-{j}"
        chunk.payload.document_id = document_id
        for name in ("company", "language", "doc_type"):
            chunk.payload.ClearField(name)  # nothing new in the catalog the orchestrator reads
        chunk.payload.ClearField("year")
        chunk.payload.ClearField("quarter")
        del chunk.payload.aliases[:]
        ctx.stored_documents.add(document_id)
    return msg


def _fuzz_document(msg: ingester_pb2.AddDocumentRequest, case: int, ctx: Ctx) -> Message:
    if msg.WhichOneof("content") in ("text", "data") and not msg.asynchronous:
        msg.source = f"fuzz-{SEED}-{case}.txt"
        msg.metadata.company = ""
        msg.metadata.year = 0
        ctx.stored_documents.add(document_id_for(msg.source))
    return msg


@dataclass(frozen=True)
class Method:
    path: str
    request: type[Message]
    service: str
    streaming: bool = False
    sanitize: Sanitize | None = None
    timeout_s: float = 30.0


METHODS: list[Method] = [
    Method("/weaverbird.v1.EmbedderService/Embed", embedder_pb2.EmbedRequest, "embedder"),
    Method("/weaverbird.v1.EmbedderService/DescribeModel", embedder_pb2.DescribeModelRequest, "embedder"),
    Method("/weaverbird.v1.RetrieverService/Upsert", retriever_pb2.UpsertRequest, "retriever", sanitize=_fuzz_chunks),
    Method("/weaverbird.v1.RetrieverService/Search", retriever_pb2.SearchRequest, "retriever"),
    Method("/weaverbird.v1.RetrieverService/DeleteDocument", retriever_pb2.DeleteDocumentRequest, "retriever"),
    Method("/weaverbird.v1.RetrieverService/CollectionStats", retriever_pb2.CollectionStatsRequest, "retriever"),
    Method("/weaverbird.v1.RetrieverService/Catalog", retriever_pb2.CatalogRequest, "retriever"),
    Method(
        "/weaverbird.v1.GeneratorService/GenerateStream",
        generator_pb2.GenerateRequest,
        "generator",
        streaming=True,
        sanitize=_cheap_generation,
        timeout_s=120.0,
    ),
    Method(
        "/weaverbird.v1.IngesterService/AddDocument",
        ingester_pb2.AddDocumentRequest,
        "ingester",
        sanitize=_fuzz_document,
    ),
    Method(
        "/weaverbird.v1.OrchestratorService/AskStream",
        orchestrator_pb2.AskRequest,
        "orchestrator",
        streaming=True,
        sanitize=_local_refusal,
    ),
    Method(
        "/weaverbird.v1.OrchestratorService/Ask", orchestrator_pb2.AskRequest, "orchestrator", sanitize=_local_refusal
    ),
    Method(
        "/weaverbird.v1.OrchestratorService/Retrieve", orchestrator_pb2.AskRequest, "orchestrator", sanitize=_local_only
    ),
]


BY_NAME = {m.path.rsplit("/", 1)[-1]: m for m in METHODS}


def fuzz_case(method: Method, case: int, ctx: Ctx) -> bytes:
    """The raw request of case `case`: the same bytes for the same seed, method and case."""
    rng = random.Random(f"{SEED}:{method.path}:{case}")
    roll = rng.random()
    if roll < 0.35:
        raw = tweak(template(method.request, rng, ctx), rng, ctx).SerializeToString()
    elif roll < 0.6:
        raw = random_message(method.request, rng, ctx).SerializeToString()
    elif roll < 0.8:
        raw = mutate(random_message(method.request, rng, ctx).SerializeToString(), rng)
    elif roll < 0.9:
        raw = rng.randbytes(rng.randint(0, 200))
    else:
        raw = random_wire(rng)
    if method.sanitize is None:
        return raw
    try:
        decoded = method.request.FromString(raw)
    except DecodeError:
        return raw  # the server must refuse it as undecodable
    return method.sanitize(decoded, case, ctx).SerializeToString()


def _identity(raw: bytes) -> bytes:
    return raw


def call_raw(channel: grpc.Channel, method: Method, raw: bytes) -> tuple[grpc.StatusCode, str]:
    try:
        if method.streaming:
            call = channel.unary_stream(method.path, request_serializer=_identity, response_deserializer=_identity)
            for _ in call(raw, timeout=method.timeout_s):
                pass
        else:
            call = channel.unary_unary(method.path, request_serializer=_identity, response_deserializer=_identity)
            call(raw, timeout=method.timeout_s)
    except grpc.RpcError as err:
        return err.code(), err.details() or ""
    return grpc.StatusCode.OK, ""


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ctx(stack: LocalStack) -> Iterator[Ctx]:
    with grpc.insecure_channel(stack.config.addr("retriever")) as channel:
        stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
        dimension = stub.CollectionStats(retriever_pb2.CollectionStatsRequest(), timeout=10).dimension
        assert dimension > 0, "the stack's KB should hold the demo documents"
        context = Ctx(dimension=dimension)
        yield context
        # Whatever the fuzz stored is removed, so later tests see the KB they expect.
        for document_id in sorted(context.stored_documents):
            stub.DeleteDocument(retriever_pb2.DeleteDocumentRequest(document_id=document_id), timeout=30)


@pytest.mark.parametrize("method", METHODS, ids=list(BY_NAME))
def test_no_request_makes_a_service_fail(stack: LocalStack, ctx: Ctx, method: Method) -> None:
    statuses: Counter[str] = Counter()
    problems: list[str] = []
    with grpc.insecure_channel(stack.config.addr(method.service)) as channel:
        for case in range(CASES):
            raw = fuzz_case(method, case, ctx)
            code, details = call_raw(channel, method, raw)
            statuses[code.name] += 1
            leak = LEAK.search(details)
            if code in FORBIDDEN or leak:
                problems.append(f"case {case} ({raw[:60]!r}...): {code.name} {details[:200]!r}")
    print(f"{method.path}: {dict(statuses)}")  # shown with -s or on failure: what the run exercised
    assert not problems, (
        f"{len(problems)} of {CASES} requests (WEAVERBIRD_FUZZ_SEED={SEED}) were answered badly; "
        f"statuses {dict(statuses)}:\n" + "\n".join(problems[:10])
    )
    # Both sides were exercised: refusals of bad input (undecodable bytes at least) and accepted calls.
    assert statuses["INVALID_ARGUMENT"] > 0 and statuses["OK"] > 0, dict(statuses)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/_x",
        "ftp://127.0.0.1/x",
        "dict://127.0.0.1:11211/stat",
        "http://127.0.0.1:1/",
        "http://localhost/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
    ],
)
def test_async_add_refuses_bad_urls_before_queueing(stack: LocalStack, url: str) -> None:
    with grpc.insecure_channel(stack.config.addr("ingester")) as channel:
        code, details = call_raw(
            channel,
            BY_NAME["AddDocument"],
            ingester_pb2.AddDocumentRequest(url=url, asynchronous=True).SerializeToString(),
        )
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    assert ("scheme" in details or "refused URL" in details) and not LEAK.search(details), details


def test_every_service_is_serving_after_the_fuzz(stack: LocalStack, ctx: Ctx) -> None:
    for service in SERVICES:
        with grpc.insecure_channel(stack.config.addr(service)) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
    # And a normal question still finds its note.
    with grpc.insecure_channel(stack.config.addr("orchestrator")) as channel:
        reply = orchestrator_pb2_grpc.OrchestratorServiceStub(channel).Retrieve(
            orchestrator_pb2.AskRequest(
                question="What was Northwind Robotics' revenue in fiscal 2024?",
                filter=common_pb2.PayloadFilter(origin=common_pb2.ORIGIN_LOCAL),
            ),
            timeout=30,
        )
    assert reply.passages and "Northwind" in reply.passages[0].text
