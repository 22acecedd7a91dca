"""Glossary concepts in the lexical leg: a question finds a chunk that words the same item differently."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from weaverbird_retriever.lexical import COMPONENT_WEIGHT, encoder
from weaverbird_retriever.stores import ChunkRecord, VectorStore, open_store, point_id
from weaverbird_retriever.stores.base import SearchOptions

DIM = 8
DOCS = [
    "Purchases of property, plant and equipment (1,577) (1,373)",
    "Total current assets 9,210 and total current liabilities 4,130 at year end",
    "The board met in March to discuss its priorities",
    "营业收入同比增长12%，归母净利润下降",
]


@pytest.fixture(params=["edge", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    s = open_store(
        request.param,
        path=str(tmp_path) if request.param == "edge" else ":memory:",
        url=None,
        api_key=None,
        collection="kb",
    )
    s.ensure_collection(DIM)
    # The same dense vector for every chunk: only the lexical leg can tell them apart.
    vector = np.ones(DIM, dtype=np.float32)
    s.upsert([ChunkRecord(point_id(f"d{i}", 0), vector, text, {"document_id": f"d{i}"}) for i, text in enumerate(DOCS)])
    yield s
    s.close()


def _top(store: VectorStore, text: str, mode: str) -> list[str]:
    return [h.text for h in store.search(np.ones(DIM, dtype=np.float32), 4, None, SearchOptions(mode=mode, text=text))]


def test_a_question_finds_the_line_item_worded_another_way(store: VectorStore) -> None:
    # "capital expenditure" shares no word with the cash flow line, but both carry the capex concept.
    assert _top(store, "What was the capital expenditure in 2018?", "hybrid")[0] == DOCS[0]


def test_a_ratio_finds_the_lines_it_is_computed_from(store: VectorStore) -> None:
    assert _top(store, "What is the working capital ratio?", "hybrid")[0] == DOCS[1]
    assert _top(store, "流动比率是多少？", "hybrid")[0] == DOCS[1]


def test_a_chinese_question_finds_an_english_line_and_back(store: VectorStore) -> None:
    assert _top(store, "What was net income?", "hybrid")[0] == DOCS[3]


def test_literal_lookups_search_the_words_alone(store: VectorStore) -> None:
    # Lexical mode answers "does any chunk hold these words?" (the coverage gate's name look-ups).
    assert DOCS[0] not in _top(store, "capital expenditure", "lexical")


def test_ratio_line_items_weigh_less_than_the_questions_own_concepts() -> None:
    plain = encoder().query("quick ratio", expand=False)
    expanded = encoder().query("quick ratio", expand=True)
    extra = [v for i, v in zip(expanded.indices, expanded.values, strict=True) if i not in set(plain.indices)]
    assert 1.0 in extra  # the ratio's own concept
    assert (
        extra.count(COMPONENT_WEIGHT) == 6
    )  # current assets / liabilities, cash, receivables, inventory, balance sheet
