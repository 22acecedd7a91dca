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

import math
import os
import random
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from google.protobuf import descriptor as pb_descriptor
from google.protobuf import message_factory
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
FD = pb_descriptor.FieldDescriptor

# ---------------------------------------------------------------------------------------------
# Value pools
# ---------------------------------------------------------------------------------------------

INT32 = [0, 1, 2, 3, 4, 5, 7, 20, 21, 100, 101, 1000, 2024, 10_000, 2**31 - 1, -1, -2, -(2**31), 65]
INT64 = [*INT32, 2**32, 2**63 - 1, -(2**63)]
FLOATS = [0.0, -0.0, 0.5, 1.0, -1.0, 1.5, 2.0, 0.01, 3.4e38, -3.4e38, 1e-45, math.nan, math.inf, -math.inf]
WORDS = [
    "revenue",
    "营业收入",
    "Northwind Robotics",
    "青松新能源2024年的净利润是多少？",
    "2024",
    "Q3",
    "ADOBE",
    "ج",
    "\u202eevil",
    "e\u0301",
    "😀🚀",
    "\x00",
    "\t\n",
    "   ",
    "'; DROP TABLE chunks; --",
    "{{7*7}}",
    "../../etc/passwd",
    "%s%n",
]
URLS = [
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/_stats",
    "ftp://127.0.0.1/x",
    "dict://127.0.0.1:11211/stat",
    "javascript:alert(1)",
    "http://127.0.0.1:1/",
    "http://localhost/admin",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]:22/",
    "http://10.0.0.1/",
    "http://0x7f.1/",
    "http://2130706433/",
    "https://user:pw@127.0.0.1/",
    "http://",
    "http:///path",
    "//127.0.0.1/",
    "HTTP://127.0.0.1./",
    "http://[::ffff:127.0.0.1]/",
]
LANGUAGES = ["", "en", "zh", "fr", "EN", "zh-CN", "x" * 40]
FILENAMES = ["a.txt", "a.md", "a.pdf", "a.html", "noext", "", "../../x.pdf", "f" * 300, "报告.md", "a.exe"]
BLOBS = [
    b"",
    b"%PDF-1.7\n1 0 obj << >> endobj\ntrailer<<>>\n%%EOF",
    b"<html><head><title>T</title></head><body><p>Revenue was 5.</p></body></html>",
    "# 标题\n\n营业收入为 5 亿元。".encode(),
    b"\x00\xff" * 50,
]


@dataclass
class Ctx:
    """What a generator needs to know about the stack: the collection's vector dimension."""

    dimension: int
    valid_generations: int = 0
    stored_documents: set[str] = field(default_factory=set)


def random_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(WORDS)
    if roll < 0.55:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
    if roll < 0.8:
        alphabet = string.printable + "營收净利润亿元０１２©€\u200b\ufeff"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
    if roll < 0.9:
        return "".join(chr(rng.choice([rng.randint(0x20, 0xD7FF), rng.randint(0xE000, 0x10FFFF)])) for _ in range(30))
    return rng.choice(["x", "营"]) * rng.choice([2001, 4001, 9001, 21_000])


def random_vector(rng: random.Random, dimension: int) -> list[float]:
    n = rng.choice([0, 1, dimension - 1, dimension, dimension, dimension, dimension + 1, 8193])
    values = [rng.gauss(0.0, 1.0) for _ in range(n)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    values = [v / norm for v in values]
    if values and rng.random() < 0.5:
        spoil = rng.choice([math.nan, math.inf, -math.inf, 3.4e38, 0.0])
        if spoil == 0.0:
            values = [0.0] * n
        else:
            values[rng.randrange(n)] = spoil
    return values


def _count(rng: random.Random) -> int:
    return rng.choice([0, 1, 1, 1, 2, 3]) if rng.random() < 0.95 else rng.choice([21, 65, 1025])


def _scalar(f: pb_descriptor.FieldDescriptor, rng: random.Random, ctx: Ctx) -> object:
    name = f.name
    if f.type == FD.TYPE_STRING:
        if name == "url":
            return rng.choice(URLS) if rng.random() < 0.8 else random_text(rng)
        if name == "id":
            return rng.choice(["", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "not-a-uuid", "{3F2504E0-4F89-11D3}"])
        if name == "language":
            return rng.choice(LANGUAGES)
        if name == "filename":
            return rng.choice(FILENAMES)
        if name == "published_date":
            return rng.choice(["", "2024-03-01", "yesterday", "2024-13-45", "9" * 80])
        return random_text(rng)
    if f.type == FD.TYPE_BYTES:
        return rng.choice(BLOBS) if rng.random() < 0.7 else rng.randbytes(rng.randint(0, 2048))
    if f.type == FD.TYPE_BOOL:
        return rng.random() < 0.5
    if f.type == FD.TYPE_ENUM:
        known = [v.number for v in f.enum_type.values]
        return rng.choice(known) if rng.random() < 0.7 else rng.choice([-1, len(known), 99, 2**31 - 1])
    if f.type in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        return rng.choice(FLOATS) if rng.random() < 0.7 else rng.uniform(-3.0, 3.0)
    if f.type in (FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64):
        return rng.choice(INT64) if rng.random() < 0.8 else rng.randint(-(2**63), 2**63 - 1)
    if f.type in (FD.TYPE_UINT32, FD.TYPE_UINT64, FD.TYPE_FIXED32, FD.TYPE_FIXED64):
        return rng.choice([0, 1, 5, 2**32 - 1])
    return rng.choice(INT32) if rng.random() < 0.8 else rng.randint(-(2**31), 2**31 - 1)


def random_message(cls: type[Message], rng: random.Random, ctx: Ctx, depth: int = 0) -> Message:
    """A message of `cls` with random fields set, chosen for the bugs they tend to find."""
    msg = cls()
    chosen_oneofs: dict[str, str] = {}
    for oneof in cls.DESCRIPTOR.oneofs:
        if len(oneof.fields) > 1:  # a real oneof (proto3 `optional` makes one-field synthetic ones)
            chosen_oneofs[oneof.name] = rng.choice([*(f.name for f in oneof.fields), ""])
    for f in cls.DESCRIPTOR.fields:
        oneof = f.containing_oneof
        if oneof is not None and oneof.name in chosen_oneofs:
            if chosen_oneofs[oneof.name] != f.name:
                continue
        elif rng.random() < 0.3:
            continue
        repeated = f.is_repeated
        if f.type == FD.TYPE_MESSAGE:
            if depth > 3:
                continue
            sub = message_factory.GetMessageClass(f.message_type)
            if repeated:
                for _ in range(_count(rng)):
                    getattr(msg, f.name).add().CopyFrom(random_message(sub, rng, ctx, depth + 1))
            else:
                getattr(msg, f.name).CopyFrom(random_message(sub, rng, ctx, depth + 1))
        elif repeated and f.type in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
            getattr(msg, f.name).extend(random_vector(rng, ctx.dimension))
        elif repeated:
            getattr(msg, f.name).extend(_scalar(f, rng, ctx) for _ in range(_count(rng)))
        else:
            setattr(msg, f.name, _scalar(f, rng, ctx))
    return msg


def unit_vector(rng: random.Random, dimension: int) -> list[float]:
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def template(cls: type[Message], rng: random.Random, ctx: Ctx) -> Message:
    """A request the service accepts, so a one-field tweak of it tests each rule on its own."""
    vector = unit_vector(rng, ctx.dimension)
    examples: dict[type[Message], Message] = {
        embedder_pb2.EmbedRequest: embedder_pb2.EmbedRequest(
            texts=["revenue 2024"], kind=embedder_pb2.EMBED_KIND_QUERY
        ),
        retriever_pb2.UpsertRequest: retriever_pb2.UpsertRequest(
            chunks=[
                retriever_pb2.Chunk(
                    vector=vector, text="fuzz chunk", payload=common_pb2.ChunkPayload(document_id="fuzz", title="t")
                )
            ]
        ),
        retriever_pb2.SearchRequest: retriever_pb2.SearchRequest(vector=vector, k=3, text="revenue"),
        retriever_pb2.DeleteDocumentRequest: retriever_pb2.DeleteDocumentRequest(document_id="fuzz-none"),
        retriever_pb2.CatalogRequest: retriever_pb2.CatalogRequest(limit=10),
        generator_pb2.GenerateRequest: generator_pb2.GenerateRequest(
            question="What was revenue?", passages=[generator_pb2.ContextPassage(number=1, text="Revenue was 5.")]
        ),
        ingester_pb2.AddDocumentRequest: ingester_pb2.AddDocumentRequest(
            text="Revenue was 5 in 2024.", filename="note.md"
        ),
        orchestrator_pb2.AskRequest: orchestrator_pb2.AskRequest(
            question="What was Northwind Robotics' revenue in fiscal 2024?", top_k=3
        ),
    }
    return examples.get(cls, cls())


def tweak(msg: Message, rng: random.Random, ctx: Ctx, depth: int = 0) -> Message:
    """`msg` with one field (possibly inside a sub-message) set to a random value."""
    fields = list(msg.DESCRIPTOR.fields)
    if not fields:
        return msg
    f = rng.choice(fields)
    if f.type == FD.TYPE_MESSAGE and depth < 3:
        sub_cls = message_factory.GetMessageClass(f.message_type)
        if f.is_repeated:
            items = getattr(msg, f.name)
            if items and rng.random() < 0.7:
                tweak(items[rng.randrange(len(items))], rng, ctx, depth + 1)
            else:
                items.add().CopyFrom(random_message(sub_cls, rng, ctx, depth + 1))
        else:
            tweak(getattr(msg, f.name), rng, ctx, depth + 1)
        return msg
    msg.ClearField(f.name)
    if f.is_repeated and f.type in (FD.TYPE_FLOAT, FD.TYPE_DOUBLE):
        getattr(msg, f.name).extend(random_vector(rng, ctx.dimension))
    elif f.is_repeated:
        getattr(msg, f.name).extend(_scalar(f, rng, ctx) for _ in range(_count(rng)))
    else:
        setattr(msg, f.name, _scalar(f, rng, ctx))
    return msg


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def random_wire(rng: random.Random) -> bytes:
    """Well-formed protobuf wire data with random field numbers and wire types (unknown or mistyped fields)."""
    out = bytearray()
    for _ in range(rng.randint(1, 8)):
        number = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 1000, 536_870_911])
        wire = rng.choice([0, 1, 2, 5])
        out += _varint(number << 3 | wire)
        if wire == 0:
            out += _varint(rng.choice([0, 1, 2**31 - 1, 2**64 - 1, rng.getrandbits(64)]))
        elif wire == 1:
            out += rng.randbytes(8)
        elif wire == 5:
            out += rng.randbytes(4)
        else:
            payload = rng.randbytes(rng.randint(0, 40)) if rng.random() < 0.5 else random_text(rng)[:40].encode()
            out += _varint(len(payload)) + payload
    return bytes(out)


def mutate(raw: bytes, rng: random.Random) -> bytes:
    data = bytearray(raw or b"\x00")
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randrange(len(data) + 1)
        if op < 0.4 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op < 0.6:
            data = data[:pos]
        elif op < 0.8:
            data[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif data:
            data += data[: rng.randint(1, len(data))]
    return bytes(data)


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
