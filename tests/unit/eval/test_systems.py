from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from weaverbird_eval import cli, datasets
from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.systems import Bm25System, Tokenizer


def test_chinese_is_segmented_into_words_not_one_token_per_sentence() -> None:
    tokens = Tokenizer("zh")("贵州茅台2023年的营业收入是多少？")
    assert "营业" in tokens or "营业收入" in tokens
    assert "2023" in tokens
    assert "？" not in tokens


def test_english_drops_stop_words_and_stems() -> None:
    assert Tokenizer("en")("The revenues of the companies") == ["revenu", "compani"]


def test_bm25_finds_the_chinese_context_by_its_words(tiny_data: Path) -> None:
    s = datasets.fineva(tiny_data)
    chunks = chunk_units(s)
    bm25 = Bm25System()
    bm25.index(chunks.texts, "zh", "t")
    [ranking] = bm25.search(["宁德时代在哪里建设新工厂？"], depth=10)
    assert "宁德时代" in s.units[[u.id for u in s.units].index(chunks.unit_ids[ranking[0][0]])].text
    assert bm25.search(["zzzz"], depth=10) == [[]]  # no shared term: nothing, not an error


def test_retrieval_command_scores_bm25_and_an_embedder_on_every_dataset(tiny_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["retrieval", "--data", str(tiny_data), "--systems", "bm25,use", "--out", str(out)]) == 0
    rows = json.loads((out / "retrieval.json").read_text())
    assert {(r["dataset"], r["system"]) for r in rows} == {
        (d, s) for d in ("financebench", "tatqa", "fineva") for s in ("bm25", "use")
    }
    for r in rows:
        assert all(0.0 <= v <= 1.0 for v in r["metrics"].values())
        assert r["metrics"]["R@10"] >= r["metrics"]["R@1"]
    fb = {r["system"]: r["metrics"] for r in rows if r["dataset"] == "financebench"}
    assert fb["bm25"]["R@1"] == pytest.approx(1.0)  # every question names its page's words
    assert "| fineva | zh |" in (out / "retrieval.md").read_text()
    # Metrics per kind of question: every Fin-Eva file's questions counted once, each with its own scores.
    fineva = next(r for r in rows if r["dataset"] == "fineva" and r["system"] == "bm25")
    assert sum(m["queries"] for m in fineva["parts"].values()) == len(datasets.load("fineva", tiny_data).queries)
    assert all(0.0 <= m["R@5"] <= 1.0 for m in fineva["parts"].values())
    assert "| kind of question |" in (out / "retrieval.md").read_text()
    assert (out / "retrieval.png").read_bytes()[:4] == b"\x89PNG"


def test_calibrate_sets_c_at_the_low_quantile_of_held_out_positives(tiny_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli.main(["calibrate", "--data", str(tiny_data), "--systems", "use", "--out", str(out)]) == 0
    [result] = json.loads((out / "calibration.json").read_text())
    assert result["model_id"].startswith("google/universal-sentence-encoder")
    # Recompute the held-out positives independently: best cosine between a question and its gold chunks.
    from weaverbird_common.encoders import build_backend

    backend = build_backend("use")
    positives = []
    for s in (datasets.load(n, tiny_data) for n in ("financebench", "tatqa", "fineva")):
        chunks = chunk_units(s)
        p = backend.embed(chunks.texts, "passage")
        for q in s.queries:
            if datasets.is_held_out(q.id):
                qv = backend.embed([q.text], "query")[0]
                gold = [i for i, u in enumerate(chunks.unit_ids) if u in q.relevant]
                positives.append(float(np.max(p[gold] @ qv)))
    low = sorted(positives)
    assert low[0] - 1e-4 <= result["threshold"] <= low[1] + 1e-4
    assert result["pairs_held_out"] == len(positives)
    for d in result["datasets"]:
        assert 0.0 <= d["web_share_dev"] <= 1.0 and 0.0 <= d["missing_stays_local"] <= 1.0
    assert (out / "calibration.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("name", "mode", "filters", "fusion"),
    [
        ("use", "dense", False, "dbsf"),
        ("lexical-use", "lexical", False, "dbsf"),
        ("hybrid-use", "hybrid", False, "dbsf"),
        ("hybrid-use-rrf", "hybrid", False, "rrf"),
        ("filtered-use", "dense", True, "dbsf"),
        ("served-use", "hybrid", True, "dbsf"),
        ("served-use-lex9", "hybrid", True, "dbsf"),
        ("served-use-rrf-lex0.5", "hybrid", True, "rrf"),
    ],
)
def test_system_names_choose_mode_filters_and_fusion(name: str, mode: str, filters: bool, fusion: str) -> None:
    from weaverbird_eval.systems import build_system

    system = build_system(name)
    try:
        assert (system.name, system.mode, system.filters, system.fusion) == (name, mode, filters, fusion)  # type: ignore[attr-defined]
    finally:
        system.close()


@pytest.mark.parametrize(("name", "weight"), [("hybrid-use", 1.0), ("served-use-lex9", 9.0), ("served-use-lex1", 1.0)])
def test_lexical_weight_comes_from_the_name(name: str, weight: float) -> None:
    from weaverbird_eval.systems import build_system

    system = build_system(name)
    try:
        assert system.lexical_weight == weight  # type: ignore[attr-defined]
    finally:
        system.close()


def test_served_uses_the_retrievers_default_weight() -> None:
    from weaverbird_eval.systems import build_system
    from weaverbird_retriever.settings import RetrieverSettings

    system = build_system("served-use")
    try:
        assert system.lexical_weight == RetrieverSettings().lexical_weight  # type: ignore[attr-defined]
    finally:
        system.close()


def test_served_finds_words_and_reads_company_aliases_from_the_catalog() -> None:
    from weaverbird_eval.systems import build_system

    texts = [
        "Operating margin was 14.2% in 2023, up from 12.0% in 2022.",
        "Board of directors and executive officers, 2023.",
        "Capital expenditures were $212 million in 2023; the Kestrel line was retooled.",
    ]
    metadata = [
        {"company": "ACME", "year": 2023, "aliases": ["Acme Industries Inc.", "ACMI"]},
        {"company": "BOLT", "year": 2023, "aliases": ["Bolt Freight Corp.", "BLTF"]},
        {"company": "ACME", "year": 2023, "aliases": ["Acme Industries Inc.", "ACMI"]},
    ]
    system = build_system("served-use")
    try:
        system.index(texts, "en", "served", metadata)
        # The ticker is only in the catalog (payload aliases), never in the chunk text.
        [ranking] = system.search(["What was BLTF's operating margin in 2023?"], depth=10)
        [lexical] = system.search(["Kestrel retooled"], depth=10)
    finally:
        system.close()
    assert ranking[0][0] == 1
    assert sorted(i for i, _ in ranking) == [0, 1, 2]
    assert lexical[0][0] == 2


def test_filtered_dense_ranks_the_named_company_first_and_still_returns_the_rest(tmp_path: Path) -> None:
    from weaverbird_eval.systems import build_system

    texts = [
        "Operating margin was 14.2% in 2023, up from 12.0% in 2022.",  # closest wording, wrong company
        "Board of directors and executive officers, 2023.",
        "ACME capital expenditures were $212 million in 2023.",
    ]
    metadata = [{"company": "ACME", "year": 2023}, {"company": "BOLT", "year": 2023}, {"company": "ACME", "year": 2023}]
    system = build_system("filtered-use")
    try:
        system.index(texts, "en", "filters", metadata)
        [ranking] = system.search(["What was Bolt's operating margin in 2023?"], depth=10)
        [plain] = build_system_search(texts, tmp_path, "What was Bolt's operating margin in 2023?")
    finally:
        system.close()
    assert ranking[0][0] == 1  # the only BOLT chunk leads
    assert sorted(i for i, _ in ranking) == [0, 1, 2]  # the unfiltered hits follow, none lost
    assert plain[0][0] == 0  # without filters the ACME sentence wins: the filter changed the order


def build_system_search(texts: list[str], cache: Path, query: str) -> list[list[tuple[int, float]]]:
    from weaverbird_eval.systems import DenseSystem

    system = DenseSystem("use", cache=cache)
    try:
        system.index(texts, "en", "filters")
        return system.search([query], depth=10)
    finally:
        system.close()


def test_calibration_skips_questions_whose_gold_unit_has_no_text() -> None:
    from weaverbird_eval.calibration import pair_scores
    from weaverbird_eval.datasets import EvalSet, Query, Unit
    from weaverbird_eval.systems import DenseSystem

    units = [Unit("a", "ACME", "Revenue was $5 million."), Unit("blank", "ACME", "  "), Unit("b", "BOLT", "Margin 9%.")]
    queries = [
        Query("q1", "What was revenue?", frozenset({"a"})),
        Query("q2", "What is in the blank table?", frozenset({"blank"})),
    ]
    system = DenseSystem("use")
    try:
        scores = pair_scores(system, EvalSet("tiny", "en", units, queries))
    finally:
        system.close()
    assert len(scores.positive) == len(scores.negative) == len(scores.held_out) == 1
    assert scores.positive[0] > scores.negative[0]  # the revenue sentence beats the margin one


def test_spaced_stores_the_earlier_density_that_read_no_figures_in_unspaced_chinese() -> None:
    # Issue 35's comparison in one run: the served path with the figure prior off, with the spaced-only
    # density (0 for unspaced Chinese: the prior's order is the fusion's) and with the served density.
    from weaverbird_eval.systems import build_system

    texts = [
        "公司营业收入的讨论：营业收入增长、营业收入驱动因素与营业收入展望，以及营业收入的结构。",
        "营业收入86.47亿元，营业成本70.01亿元，净利润12.5亿元，同比增长11.6%。",
    ]
    orders = {}
    for name in ("served-use-fig0", "served-use-spaced", "served-use"):
        system = build_system(name)
        try:
            system.index(texts, "zh", "spaced", None)
            [ranking] = system.search(["公司的营业收入是多少？"], depth=10)
        finally:
            system.close()
        orders[name] = [i for i, _ in ranking]
    assert orders["served-use-fig0"] == orders["served-use-spaced"] == [0, 1]  # the prose repeats the words
    assert orders["served-use"] == [1, 0]  # its figures, read inside the Chinese text, put the statement first
