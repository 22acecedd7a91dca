"""Runs the retriever service: settings -> vector store -> gRPC server."""

from __future__ import annotations

import asyncio
import functools

from weaverbird.v1 import retriever_pb2, retriever_pb2_grpc
from weaverbird_common.logs import configure_logging
from weaverbird_common.server import ServiceBinding, serve_forever

from weaverbird_retriever.facts import facts_collection, facts_data_dir
from weaverbird_retriever.lexical import encoder
from weaverbird_retriever.servicer import RetrieverServicer
from weaverbird_retriever.settings import RetrieverSettings
from weaverbird_retriever.stores import open_async_store


async def main() -> None:
    settings = RetrieverSettings()
    configure_logging(settings.log_level, "retriever")
    # Load jieba's dictionary before serving: on the first Chinese question it cost about 2 s.
    encoder().query("营业收入")
    # Chunks and facts live in two collections of the same backend.
    open_collection = functools.partial(
        open_async_store,
        settings.store,
        url=settings.qdrant_url,
        api_key=settings.qdrant_api_key,
        timeout_s=settings.qdrant_timeout_s,
    )
    store = open_collection(path=settings.data_dir, collection=settings.collection)
    facts = open_collection(
        path=facts_data_dir(settings.store, settings.data_dir), collection=facts_collection(settings.collection)
    )
    servicer = RetrieverServicer.from_settings(store, settings, facts=facts)
    await servicer.warm_up()
    binding = ServiceBinding.of(retriever_pb2, retriever_pb2_grpc, "RetrieverService", servicer)

    async def close() -> None:
        try:
            await store.close()
        finally:
            await facts.close()

    await serve_forever("retriever", settings, [binding], on_stop=close)


if __name__ == "__main__":
    asyncio.run(main())
