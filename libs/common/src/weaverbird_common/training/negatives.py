"""Hard negatives by BM25 over the KB's passages (bm25s, the evaluation's BM25): the best-scoring
passages of the same company on other pages, and other companies' passages with the same line item."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from weaverbird_common.training.passages import Passage


def _key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", label.lower()).strip()


class NegativeMiner:
    def __init__(self, passages: Sequence[Passage], depth: int = 30) -> None:
        import bm25s  # requirements/eval.txt: only training and evaluation need it

        self._bm25s: Any = bm25s
        self.passages = list(passages)
        self.depth = min(depth, len(self.passages))
        self._index: Any = bm25s.BM25()
        self._index.index(
            bm25s.tokenize([p.text for p in self.passages], stopwords="en", show_progress=False), show_progress=False
        )
        self._by_label: dict[str, list[int]] = {}

    def add_line_item(self, label: str, passage_index: int) -> None:
        """Remembers that a passage holds a row `label` (for other-company negatives)."""
        rows = self._by_label.setdefault(_key(label), [])
        if not rows or rows[-1] != passage_index:
            rows.append(passage_index)

    def search(self, queries: Sequence[str]) -> list[list[int]]:
        tokens = self._bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        found, _ = self._index.retrieve(tokens, k=self.depth, show_progress=False, n_threads=1)
        return [[int(i) for i in row] for row in found]

    def pick(
        self, positive: Passage, ranked: Sequence[int], label: str, count: int, rng: random.Random
    ) -> list[tuple[Passage, str]]:
        """Up to `count` negatives, each with why it was chosen: half from the same company (other pages,
        and for a table row, pages without that row, which could restate the figure), the others from
        other companies holding the same line item, then the best BM25 hits left."""
        key = _key(label) if label else ""
        seen = {positive.id}

        def fits(p: Passage) -> bool:
            if p.id in seen or (p.document_id == positive.document_id and p.page == positive.page):
                return False
            return not (key and p.company == positive.company and key in _key(p.body))

        out: list[tuple[Passage, str]] = []
        same = [self.passages[i] for i in ranked if self.passages[i].company == positive.company]
        for p in same:
            if len(out) >= (count + 1) // 2:
                break
            if fits(p):
                out.append((p, "same company, other page (bm25)"))
                seen.add(p.id)
        if key:
            others = [
                self.passages[i] for i in self._by_label.get(key, ()) if self.passages[i].company != positive.company
            ]
            rng.shuffle(others)
            for p in others:
                if len(out) >= count:
                    break
                if fits(p):
                    out.append((p, "other company, same line item"))
                    seen.add(p.id)
        for i in ranked:
            if len(out) >= count:
                break
            if fits(self.passages[i]):
                out.append((self.passages[i], "bm25"))
                seen.add(self.passages[i].id)
        return out
