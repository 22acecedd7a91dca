"""Runs the orchestrator service: settings -> peers, web path, publisher -> question flow -> gRPC server."""

from __future__ import annotations

import asyncio

from weaverbird.v1 import orchestrator_pb2, orchestrator_pb2_grpc
from weaverbird_common.clients import use_client_tls
from weaverbird_common.ingest_publisher import IngestPublisher
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever, tls_files
from weaverbird_common.web import PageFetcher, UrlGuard
from weaverbird_common.zh_names import warm_up as warm_up_chinese_names

from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.query_encoder import with_query_encoder
from weaverbird_orchestrator.rerank import build_reranker
from weaverbird_orchestrator.servicer import OrchestratorServicer
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.web import WebPath, build_provider


def build_web_path(settings: OrchestratorSettings) -> WebPath | None:
    if settings.web_provider == "none":
        return None
    provider = build_provider(
        settings.web_provider,
        base_url=settings.web_base_url,
        api_key=settings.web_api_key.get_secret_value() if settings.web_api_key else None,
    )
    guard = UrlGuard(settings.web_allow_hosts, names_may_resolve_private=settings.web_allow_private_names)
    fetcher = PageFetcher(guard, max_bytes=int(settings.web_max_page_mb * 1024 * 1024))
    return WebPath(
        provider,
        fetcher,
        pages=settings.web_pages,
        deadline_s=settings.web_deadline_s,
        search_timeout_s=settings.web_search_timeout_s,
        enough_pages=min(settings.web_enough_pages, settings.web_pages),
        max_chunks=settings.web_max_chunks,
    )


async def main() -> None:
    settings = OrchestratorSettings()  # type: ignore[call-arg]  # peer addresses come from the env
    configure_logging(settings.log_level, "orchestrator")
    use_client_tls(tls_files(settings))  # calls to peers present this service's certificate (mTLS)
    grpc_peers = GrpcPeers(settings)
    peers = with_query_encoder(grpc_peers, settings.query_embedder, settings.query_embedder_backend)
    web = build_web_path(settings)
    if web is not None:
        await web.warm_up()
    if settings.coverage_gate:
        await asyncio.to_thread(warm_up_chinese_names)  # jieba's dictionary: ~2 s once, not on a question
    publisher = IngestPublisher(settings.kafka) if settings.kafka else None
    flow = QuestionFlow(peers, settings, web, publisher, build_reranker(settings))
    binding = ServiceBinding.of(
        orchestrator_pb2, orchestrator_pb2_grpc, "OrchestratorService", OrchestratorServicer(flow)
    )

    async def stop() -> None:
        await flow.aclose()
        await grpc_peers.close()
        if publisher is not None:
            await asyncio.to_thread(publisher.close, 5.0)

    await serve_forever("orchestrator", settings, [binding], on_stop=stop)


if __name__ == "__main__":
    asyncio.run(main())
