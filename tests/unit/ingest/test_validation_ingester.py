"""AddDocument edge checks, and asynchronous adds refused at once instead of failing in the dead-letter topic."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import grpc
import pytest
from weaverbird.v1 import ingester_pb2, ingester_pb2_grpc
from weaverbird_common.errors import InvalidArgument
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_common.server import ServiceBinding, start_server
from weaverbird_common.web.ssrf import UrlGuard
from weaverbird_ingester import validation as v
from weaverbird_ingester.servicer import IngesterServicer

PUBLIC = "93.184.216.34"
DNS = {"public.test": [PUBLIC], "intranet.test": ["10.0.0.5"], "localhost": ["127.0.0.1"]}


async def resolver(host: str, port: int) -> Sequence[str]:
    if host == "flaky.test":
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
    try:
        return DNS[host]
    except KeyError:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


Add = ingester_pb2.AddDocumentRequest
Meta = ingester_pb2.DocumentMetadata


@asynccontextmanager
async def queueing_ingester(
    publish: Callable[[IngestMessage], bool | None],
) -> AsyncIterator[ingester_pb2_grpc.IngesterServiceStub]:
    """An ingester that only queues (no writer; fetching fails the test), served by a real gRPC server
    with the error interceptor, as a client sees it."""

    async def no_fetch(url: str) -> tuple[bytes, str]:
        raise AssertionError("an asynchronous add must not fetch")

    servicer = IngesterServicer(
        writer=None,  # type: ignore[arg-type]  # asynchronous adds never write
        max_document_bytes=1 << 20,
        fetch_url=no_fetch,
        publish=publish,
        url_guard=UrlGuard(resolver=resolver),
    )
    binding = ServiceBinding(
        ingester_pb2_grpc.add_IngesterServiceServicer_to_server, servicer, "weaverbird.v1.IngesterService"
    )
    running = await start_server([binding])
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            yield ingester_pb2_grpc.IngesterServiceStub(channel)
    finally:
        await running.stop(0)


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (Add(), "one of data, text or url is required"),
        (Add(text="   "), "text must not be empty"),
        (Add(data=b"x"), "filename"),
        (Add(data=b"", filename="a.txt"), "data must not be empty"),
        (Add(text="x", filename="f" * 300), "filename has 300"),
        (Add(text="x", asynchronous=True), "asynchronous ingestion takes a url"),
        (Add(url="file:///etc/passwd"), "scheme 'file'"),
        (Add(url="gopher://127.0.0.1:70/_x", asynchronous=True), "scheme 'gopher'"),
        (Add(url="dict://127.0.0.1:11211/", asynchronous=True), "scheme 'dict'"),
        (Add(url="ftp://public.test/a", asynchronous=True), "scheme 'ftp'"),
        (Add(text="x", metadata=Meta(quarter=5)), "metadata.quarter"),
        (Add(text="x", metadata=Meta(year=-2024)), "metadata.year"),
        (Add(text="x", metadata=Meta(language="fr")), "metadata.language"),
        (Add(text="x", metadata=Meta(published_date="yesterday")), "metadata.published_date"),
        (Add(text="x", metadata=Meta(title="t" * 2000)), "metadata.title"),
    ],
)
def test_bad_requests_name_the_field(request_: ingester_pb2.AddDocumentRequest, fragment: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        v.validate_add(request_, max_document_bytes=1000)
    assert fragment in str(err.value)


def test_good_requests_pass() -> None:
    v.validate_add(
        Add(text="Revenue was 5.", metadata=Meta(year=2024, published_date="2024-03-01")), max_document_bytes=100
    )
    v.validate_add(Add(url="https://public.test/a.html", asynchronous=True), max_document_bytes=100)


async def test_queueing_vets_the_address_but_lets_a_dns_hiccup_through() -> None:
    guard = UrlGuard(resolver=resolver)
    for url in (
        "http://localhost:8080/",
        "http://intranet.test/",
        "http://169.254.169.254/latest/",
        "http://2130706433/",
    ):
        with pytest.raises(InvalidArgument, match="refused URL"):
            await v.vet_url_for_queue(guard, url)
    await v.vet_url_for_queue(guard, "https://public.test/report.html")
    await v.vet_url_for_queue(guard, "https://flaky.test/report.html")  # the consumer vets it again


async def test_async_add_of_private_or_odd_urls_is_refused_before_anything_is_queued() -> None:
    published: list[IngestMessage] = []
    async with queueing_ingester(published.append) as stub:
        for url in ("file:///etc/passwd", "gopher://public.test/", "http://localhost/", "http://intranet.test/x"):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.AddDocument(Add(url=url, asynchronous=True), timeout=10)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, url
            assert "Traceback" not in err.value.details() and "Error" not in err.value.details()
        assert published == []
        queued = await stub.AddDocument(Add(url="https://public.test/r.html", asynchronous=True), timeout=10)
    assert queued.queued and [m.url for m in published] == ["https://public.test/r.html"]


async def test_default_guard_reads_the_ingester_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same allow-list as the fetcher's, so an allowed private page can be queued as it can be fetched."""
    monkeypatch.setenv("INGESTER_FETCH_ALLOW_HOSTS", '["127.0.0.1:8080"]')
    guard = v.default_url_guard()
    await v.vet_url_for_queue(guard, "http://127.0.0.1:8080/page.html")
    with pytest.raises(InvalidArgument, match="loopback"):
        await v.vet_url_for_queue(guard, "http://127.0.0.1:9090/page.html")


async def test_an_async_add_the_publisher_drops_is_refused_not_reported_queued() -> None:
    """A closed (or full) publisher drops messages; the client must hear RESOURCE_EXHAUSTED, not "queued"."""
    from weaverbird_common.ingest_publisher import IngestPublisher
    from weaverbird_common.kafka_config import KafkaSettings

    publisher = IngestPublisher(KafkaSettings(bootstrap_servers="127.0.0.1:9"))  # never connects: closed first
    publisher.close(timeout=1)

    async with queueing_ingester(publisher.publish) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.AddDocument(Add(url="https://public.test/r.html", asynchronous=True), timeout=10)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "retry" in err.value.details()
