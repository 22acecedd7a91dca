"""Remembers which (canonical URL, content hash) pairs are stored, so a re-sent page is skipped."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from weaverbird_common.docs.loaders import canonical_source


class DedupeIndex:
    """(canonical URL, content hash) pairs already stored, in a small sqlite file.

    Partitioning by document id sends every version of a URL to the same partition, so each ingester
    replica's own file sees all of them; after a rebalance a page may be written once more, which
    is harmless. Not thread-safe beyond sqlite's own locking: use it from the consumer's event loop.
    """

    def __init__(self, path: Path | str) -> None:
        """Opens (creating if needed) the index at `path`; ":memory:" keeps it in memory."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS ingested (source TEXT PRIMARY KEY, content_sha256 TEXT NOT NULL,"
            " document_id TEXT NOT NULL, chunks INTEGER NOT NULL, ingested_at TEXT NOT NULL)"
        )

    def seen(self, url: str, content_sha256: str) -> bool:
        """True if this exact content of this URL was already stored."""
        row = self._db.execute(
            "SELECT 1 FROM ingested WHERE source = ? AND content_sha256 = ?", (canonical_source(url), content_sha256)
        ).fetchone()
        return row is not None

    def seen_tagged(self, url: str, content_sha256: str) -> bool:
        """True if this content of this URL is stored filed under a company (key "<sha256>:<company>")."""
        prefix = f"{content_sha256}:"
        row = self._db.execute(
            "SELECT 1 FROM ingested WHERE source = ? AND substr(content_sha256, 1, ?) = ?",
            (canonical_source(url), len(prefix), prefix),
        ).fetchone()
        return row is not None

    def remember(self, url: str, content_sha256: str, document_id: str, chunks: int) -> None:
        """Records that this content of `url` is stored (replacing an older version's entry)."""
        self._db.execute(
            "INSERT INTO ingested VALUES (?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET"
            " content_sha256 = excluded.content_sha256, document_id = excluded.document_id,"
            " chunks = excluded.chunks, ingested_at = excluded.ingested_at",
            (canonical_source(url), content_sha256, document_id, chunks, datetime.now(UTC).isoformat()),
        )

    def forget(self, url: str) -> None:
        """Drops `url`, e.g. after its document was deleted, so the next message stores it again."""
        self._db.execute("DELETE FROM ingested WHERE source = ?", (canonical_source(url),))

    def forget_document(self, document_id: str) -> bool:
        """Drops the entry of the document with this id (the id of its URL); True if there was one."""
        return self._db.execute("DELETE FROM ingested WHERE document_id = ?", (document_id,)).rowcount > 0

    def close(self) -> None:
        self._db.close()
