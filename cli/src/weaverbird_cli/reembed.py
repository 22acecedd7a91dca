"""`weaverbird kb reembed`: the KB's chunks under a new encoder, in a new Qdrant collection, then one switch.

Every point of the served collection is read (ids, payloads, the BM25 sparse vectors kept as they are), its
title / heading / text embedded again as the ingester embeds it (`titled_text`), and written to
`<served>--<encoder>`. The counts must match before anything is switched, so the served name never holds
a mix of old and new vectors: the switch moves the served alias to the new collection in one request.
Vectors come from the embedder's own backend class (weaverbird_common.encoders), which the embedder must
serve from then on (EMBEDDER_BACKEND, EMBEDDER_MODEL_PATH): the command prints both settings.

It talks to Qdrant itself (a server URL, or a local store folder no retriever has open): the retriever has
no RPC to read every chunk or to switch collections, so the embedded `edge` store cannot be re-embedded
while it serves.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from weaverbird_common.docs.chunker import titled_text

Embed = Callable[[Sequence[str]], Any]  # passage texts -> (n, dim) unit rows


class ReembedError(RuntimeError):
    pass


@dataclass(frozen=True)
class Report:
    source: str
    target: str
    points: int
    dimension: int
    encoder: str
    switched: bool
    alias: str


def target_name(served: str, encoder: Path) -> str:
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", encoder.name).strip("-") or "encoder"
    return f"{served}--{tag}"


def resolve(client: Any, name: str) -> tuple[str, bool]:
    """(collection the name reads, whether the name is an alias)."""
    for alias in client.get_aliases().aliases:
        if alias.alias_name == name:
            return alias.collection_name, True
    return name, False


def reembed(
    client: Any, served: str, target: str, embed: Embed, encoder: str, *, batch: int = 64, switch: bool = False
) -> Report:
    from qdrant_client import models

    source, is_alias = resolve(client, served)
    if not client.collection_exists(source):
        raise ReembedError(f"no collection {served!r} to re-embed")
    if target == source or client.collection_exists(target):
        raise ReembedError(f"collection {target!r} exists: pick a new name (--to)")
    if switch and not is_alias:
        raise ReembedError(
            f"{served!r} is a collection, not an alias: run without --switch and serve the new collection by "
            "setting RETRIEVER_COLLECTION (and the embedder's model) together; serve an alias to switch in place"
        )
    params = client.get_collection(source).config.params
    sparse = params.sparse_vectors or {}
    written, dimension, offset, created = 0, 0, None, False
    while True:
        records, offset = client.scroll(
            source, limit=batch, offset=offset, with_payload=True, with_vectors=list(sparse) or False
        )
        if records:
            texts = [
                titled_text(r.payload.get("title", ""), r.payload.get("heading", ""), r.payload["text"])
                for r in records
            ]
            vectors = embed(texts)
            if not created:
                dimension = len(vectors[0])
                client.create_collection(
                    target,
                    vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE),
                    sparse_vectors_config=sparse or None,
                )
                created = True
            points = [
                models.PointStruct(
                    id=r.id,
                    vector={
                        "": [float(x) for x in v],
                        **{k: r.vector[k] for k in sparse if isinstance(r.vector, dict) and k in r.vector},
                    },
                    payload=r.payload,
                )
                for r, v in zip(records, vectors, strict=True)
            ]
            client.upsert(target, points=points, wait=True)
            written += len(points)
        if offset is None:
            break
    if not created:
        raise ReembedError(f"collection {served!r} is empty: nothing to re-embed")
    counted = client.count(target, exact=True).count
    if counted != written or counted != client.count(source, exact=True).count:
        raise ReembedError(f"{target}: {counted} points written for {written} read: not switched")
    switched = False
    if switch:
        operations: list[Any] = []
        if is_alias:
            operations.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=served)))
        operations.append(
            models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=target, alias_name=served))
        )
        client.update_collection_aliases(change_aliases_operations=operations)  # one request: atomic
        switched = True
    return Report(source, target, written, dimension, encoder, switched, served)


def _passage_text(payload: dict[str, Any]) -> str:
    # What the ingester embedded: the chunk under its document title and section heading.
    return titled_text(str(payload.get("title", "")), str(payload.get("heading", "")), str(payload["text"]))


def _sparse(vector: Any, names: Any) -> dict[str, Any]:
    """The point's lexical (BM25) vectors, copied unchanged: only the dense vector depends on the encoder."""
    return {k: vector[k] for k in names if isinstance(vector, dict) and k in vector}


def backend_embedder(backend: str, path: Path | None) -> Embed:
    """Passage vectors exactly as the embedder service makes them: the same backend class, loaded here."""
    from weaverbird_common.encoders import BackendUnavailable, build_backend

    try:
        model = build_backend(backend, model_path=str(path) if path else None)
    except (BackendUnavailable, ValueError) as exc:
        raise ReembedError(f"encoder: {exc}") from exc
    return lambda texts: model.embed(list(texts), "passage")


def add_parser(kb: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = kb.add_parser("reembed", help="the KB under a new encoder: a new collection, then switch (Qdrant)")
    p.add_argument("--encoder", type=Path, help="model directory (a `weaverbird train encoder` output)")
    p.add_argument(
        "--backend", default="sentence-transformers", help="embedder backend that loads it (EMBEDDER_BACKEND)"
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--qdrant-url", help="Qdrant server (the retriever's store=server)")
    where.add_argument("--qdrant-path", type=Path, help="a store=local folder no retriever has open")
    p.add_argument("--collection", default="weaverbird", help="the served name (RETRIEVER_COLLECTION)")
    p.add_argument("--to", help="new collection (default: <collection>--<encoder dir name>)")
    p.add_argument("--switch", action="store_true", help="then move the served alias to the new collection")
    p.add_argument("--batch", type=int, default=64)


def run(args: argparse.Namespace) -> int:
    from qdrant_client import QdrantClient

    client = QdrantClient(url=args.qdrant_url) if args.qdrant_url else QdrantClient(path=str(args.qdrant_path))
    target = args.to or target_name(args.collection, args.encoder or Path(args.backend))
    try:
        report = reembed(
            client,
            args.collection,
            target,
            backend_embedder(args.backend, args.encoder),
            str(args.encoder or args.backend),
            batch=args.batch,
            switch=args.switch,
        )
    except ReembedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        client.close()
    print(json.dumps(asdict(report), indent=2))
    print(f"serve with: EMBEDDER_BACKEND={args.backend} EMBEDDER_MODEL_PATH={args.encoder or ''}")
    if not report.switched:
        print(f"            RETRIEVER_COLLECTION={report.target}")
    return 0
