"""Bringing an Edge shard made by an older version up to date when it is opened: payload indexes added
since, lexical vectors, and the figure prior's number density, each filled from the stored text."""

from __future__ import annotations

import logging
import time

import qdrant_edge as qe

from weaverbird_retriever.lexical import LEXICAL_VECTOR, encoder
from weaverbird_retriever.stores.base import INDEXED_FIELDS, lexical_text, split_payload
from weaverbird_retriever.stores.edge_requests import call, index_schema
from weaverbird_retriever.stores.figures import FIGURE_DENSITY_KEY, density_field

log = logging.getLogger(__name__)

# Points read per scroll while migrating.
MIGRATE_PAGE = 1024


def add_missing_indexes(shard: qe.EdgeShard) -> None:
    """Payload indexes added to INDEXED_FIELDS after a shard was made (doc_type, aliases)."""
    existing = set(call(shard.info).payload_schema)
    for name, kind in INDEXED_FIELDS.items():
        if name not in existing:
            call(shard.update, qe.UpdateOperation.create_field_index(name, index_schema(name, kind)))


def add_lexical_vectors(shard: qe.EdgeShard, name: str) -> None:
    """Migrates a shard made before lexical vectors: adds the sparse vector and fills it from
    each point's stored text, so an existing knowledge base gains hybrid search on restart."""
    started = time.perf_counter()
    call(shard.update, qe.UpdateOperation.create_sparse_vector(LEXICAL_VECTOR, modifier=qe.Modifier.Idf))
    lex = encoder()
    offset, migrated = None, 0
    while True:
        records, offset = call(
            shard.scroll, qe.ScrollRequest(offset=offset, limit=MIGRATE_PAGE, with_payload=True, with_vector=False)
        )
        updates = []
        for r in records:
            text, payload = split_payload(r.payload)
            sparse = lex.document(lexical_text(text, payload))
            updates.append(qe.PointVectors(r.id, {LEXICAL_VECTOR: qe.SparseVector(sparse.indices, sparse.values)}))
        if updates:
            call(shard.update, qe.UpdateOperation.update_vectors(updates))
            migrated += len(updates)
        if offset is None:
            break
    call(shard.flush)
    log.info(
        "edge shard %s: lexical vectors added to %d points in %.1f s",
        name,
        migrated,
        time.perf_counter() - started,
    )


def add_figure_densities(shard: qe.EdgeShard, name: str) -> None:
    """Migrates points stored before the figure prior kept its number density in the payload: reads
    each one's text and sets the field, so an existing knowledge base ranks as a new one on restart."""
    missing = qe.Filter(must=[qe.IsEmptyCondition(FIGURE_DENSITY_KEY)])
    started, migrated, offset = time.perf_counter(), 0, None
    while True:
        # Pages in id order: a point whose field is set has an id before the next page's offset.
        records, offset = call(
            shard.scroll,
            qe.ScrollRequest(offset=offset, limit=MIGRATE_PAGE, filter=missing, with_payload=True, with_vector=False),
        )
        for r in records:
            field = density_field(split_payload(r.payload)[0])
            call(shard.update, qe.UpdateOperation.set_payload([r.id], field))
        migrated += len(records)
        if offset is None:
            break
    if migrated:
        call(shard.flush)
        log.info(
            "edge shard %s: figure density added to %d points in %.1f s",
            name,
            migrated,
            time.perf_counter() - started,
        )
