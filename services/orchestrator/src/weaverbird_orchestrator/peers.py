"""gRPC clients of the embedder, retriever and generator, speaking the flow's plain types."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence

from weaverbird.v1 import (
    common_pb2,
    embedder_pb2,
    embedder_pb2_grpc,
    generator_pb2,
    generator_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from weaverbird_common.clients import open_channel, peer_errors
from weaverbird_common.facts.model import Fact
from weaverbird_common.facts.proto import from_proto

from weaverbird_orchestrator.catalog import Catalog
from weaverbird_orchestrator.deadline import hop
from weaverbird_orchestrator.domain import Example, GenerationDone, Passage, PromptPrepared, Turn
from weaverbird_orchestrator.settings import OrchestratorSettings

_ORIGIN = {common_pb2.ORIGIN_LOCAL: "local", common_pb2.ORIGIN_WEB: "web"}
_ORIGIN_BY_NAME = {"local": common_pb2.ORIGIN_LOCAL, "web": common_pb2.ORIGIN_WEB}
_MODES = {
    "": retriever_pb2.SEARCH_MODE_UNSPECIFIED,
    "dense": retriever_pb2.SEARCH_MODE_DENSE,
    "lexical": retriever_pb2.SEARCH_MODE_LEXICAL,
    "hybrid": retriever_pb2.SEARCH_MODE_HYBRID,
}


def filter_proto(filters: Mapping[str, str | int]) -> common_pb2.PayloadFilter:
    flt = common_pb2.PayloadFilter()
    for name, value in filters.items():
        if name == "origin":
            flt.origin = _ORIGIN_BY_NAME[str(value)]
        else:
            setattr(flt, name, value)
    return flt


def passage_from_hit(hit: retriever_pb2.SearchHit) -> Passage:
    p = hit.payload
    return Passage(
        id=hit.id,
        text=hit.text,
        score=hit.score,
        document_id=p.document_id,
        title=p.title,
        source=p.source,
        page=p.page,
        origin=_ORIGIN.get(p.origin, "local"),
        heading=p.heading,
        term_coverage=hit.term_coverage if hit.HasField("term_coverage") else None,
        company=p.company,
        year=p.year,
    )


def source_label(passage: Passage) -> str:
    """How a passage's source is shown to the model: a URL as it is, a file by its name, with the page.

    The directory a file was ingested from is only where the KB's files happened to lie on the machine
    (`make run` sends /path/to/clone/demo/kb/...): tokens that tell the model nothing and grow with the
    install path (6-18 a demo question in this clone), read at ~40 tokens/s on a CPU. Users' citations keep
    the full source."""
    source = passage.source
    if "://" not in source:
        source = re.split(r"[\\/]", source.rstrip("\\/"))[-1] or source
    return f"{source}, page {passage.page}" if passage.page else source


class GrpcPeers:
    """Implements `flow.Peers` over gRPC channels, with a deadline on every call: the call's fixed
    timeout, or what is left of the caller's deadline when that is shorter (deadline.caller_deadline)."""

    def __init__(self, settings: OrchestratorSettings) -> None:
        self._s = settings
        self._channels = [
            open_channel(settings.embedder_addr),
            open_channel(settings.retriever_addr),
            open_channel(settings.generator_addr),
        ]
        self._embedder = embedder_pb2_grpc.EmbedderServiceStub(self._channels[0])
        self._retriever = retriever_pb2_grpc.RetrieverServiceStub(self._channels[1])
        self._generator = generator_pb2_grpc.GeneratorServiceStub(self._channels[2])

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()

    async def embed_query(self, text: str) -> list[float]:
        async with peer_errors("embedder"):
            response = await self._embedder.Embed(
                embedder_pb2.EmbedRequest(texts=[text], kind=embedder_pb2.EMBED_KIND_QUERY),
                timeout=hop(self._s.embed_timeout_s, "embedding the question"),
            )
        return list(response.vectors[0].values)

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        async with peer_errors("embedder"):
            response = await self._embedder.Embed(
                embedder_pb2.EmbedRequest(texts=list(texts), kind=embedder_pb2.EMBED_KIND_PASSAGE),
                timeout=hop(self._s.embed_timeout_s * 4, "embedding web passages"),
            )
        return [list(v.values) for v in response.vectors]

    async def embedder_model(self) -> str:
        async with peer_errors("embedder"):
            info = await self._embedder.DescribeModel(
                embedder_pb2.DescribeModelRequest(), timeout=hop(self._s.embed_timeout_s, "asking the embedder's model")
            )
        return info.model_id

    async def search(
        self,
        vector: list[float],
        k: int,
        filters: Mapping[str, str | int],
        text: str = "",
        mode: str = "",
        *,
        term_coverage: bool = False,
    ) -> list[Passage]:
        """mode "" leaves the choice to the retriever (its default: hybrid when there is text);
        `term_coverage` asks for each hit's share of the text's terms (Passage.term_coverage)."""
        request = retriever_pb2.SearchRequest(
            vector=vector, k=k, text=text, mode=_MODES[mode], term_coverage=term_coverage
        )
        if filters:
            request.filter.CopyFrom(filter_proto(filters))
        async with peer_errors("retriever"):
            response = await self._retriever.Search(request, timeout=hop(self._s.search_timeout_s, "searching"))
        return [passage_from_hit(h) for h in response.hits]

    async def lookup_facts(self, company: str, concepts: Sequence[str], years: Sequence[int]) -> list[Fact]:
        """The statement facts of `company` for these concepts and fiscal years (fact_path)."""
        request = retriever_pb2.LookupFactsRequest(company=company, concepts=list(concepts), fiscal_years=list(years))
        async with peer_errors("retriever"):
            reply = await self._retriever.LookupFacts(
                request, timeout=hop(self._s.search_timeout_s, "looking up facts")
            )
        return [from_proto(f) for f in reply.facts]

    async def collection_points(self) -> int:
        """The KB's point count: one cheap call that tells the catalog cache an ingest or delete happened."""
        async with peer_errors("retriever"):
            reply = await self._retriever.CollectionStats(
                retriever_pb2.CollectionStatsRequest(), timeout=hop(self._s.search_timeout_s, "reading the KB size")
            )
        return int(reply.points)

    async def catalog(self) -> Catalog:
        async with peer_errors("retriever"):
            reply = await self._retriever.Catalog(
                retriever_pb2.CatalogRequest(), timeout=hop(self._s.search_timeout_s, "reading the catalog")
            )
        return Catalog(
            companies={c.company: list(c.aliases) for c in reply.companies},
            points=reply.points,
            years={c.company: list(c.years) for c in reply.companies},
            quarters={c.company: [(q.year, q.quarter) for q in c.quarters] for c in reply.companies if c.quarters},
            undated={c.company: c.undated_chunks for c in reply.companies if c.undated_chunks},
            latest={c.company: c.latest_date for c in reply.companies if c.latest_date},
            kinds={
                c.company: [k.value for k in c.doc_types]
                for c in reply.companies
                if c.doc_types and sum(k.chunks for k in c.doc_types) >= c.chunks
            },
        )

    async def generate(
        self,
        question: str,
        passages: list[Passage],
        language: str,
        temperature: float,
        max_tokens: int,
        *,
        task: str = "",
        examples: Sequence[Example] = (),
        instruction: str = "",
        history: Sequence[Turn] = (),
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        request = generator_pb2.GenerateRequest(
            question=question,
            language=language,
            task=task,
            examples=[generator_pb2.Example(question=e.question, answer=e.answer) for e in examples],
            instruction=instruction,
            history=[common_pb2.Turn(role=t.role, text=t.text) for t in history],
            passages=[
                # The section heading tells the model which period a figure belongs to ("Outlook" vs results).
                generator_pb2.ContextPassage(
                    number=i,
                    title=f"{p.title} / {p.heading}" if p.heading else p.title,
                    text=p.text,
                    source=source_label(p),
                )
                for i, p in enumerate(passages, start=1)
            ],
            sampling=generator_pb2.SamplingParams(temperature=temperature, max_tokens=max_tokens),
        )
        call = self._generator.GenerateStream(request, timeout=hop(self._s.generate_timeout_s, "generating"))
        try:
            async with peer_errors("generator"):
                async for event in call:
                    kind = event.WhichOneof("event")
                    if kind == "done":
                        d = event.done
                        yield GenerationDone(
                            d.finish_reason, d.prompt_tokens, d.completion_tokens, d.model_id, d.cached_tokens
                        )
                    elif kind == "prompt":
                        p = event.prompt
                        yield PromptPrepared(
                            p.prompt_tokens, p.context_tokens, p.context_tokens_full, tuple(p.passages_used)
                        )
                    elif kind == "token":
                        yield event.token
        finally:
            # However this generator ends (its consumer stopped early, was cancelled, or closed it), end the
            # call now: leaving the loop alone does not cancel a gRPC stream, and the generator would go on
            # generating (and llama.cpp with it) until the call object is garbage-collected.
            call.cancel()
