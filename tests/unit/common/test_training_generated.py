"""Questions a model writes over KB passages (training/generated.py): what is kept, resuming, and pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from weaverbird_common.docs.documents import Document, Page
from weaverbird_common.training.build import build_pairs
from weaverbird_common.training.generated import (
    MIN_BODY_WORDS,
    clean_question,
    messages,
    read_generated,
    sample_passages,
    write_questions,
)
from weaverbird_common.training.leakage import EvaluationGuard, LeakageError
from weaverbird_common.training.passages import Passage, document_passages

BODY = (
    "Net sales rose to $4,512 million in fiscal 2023 from $4,100 million, driven by higher volumes in the "
    "adhesives segment and price increases across all regions, partly offset by currency. Q4 sales rose 4 %; "
    "the Group held 27 shares on 27 May 2019."
)


def _passage(pid: str = "doc:0", body: str = BODY) -> Passage:
    return Passage(pid, pid.split(":")[0], "ACME_2023_10K", "ACME", 3, "Results", f"ACME_2023_10K\n{body}", body)


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("What drove ACME's net sales growth in fiscal 2023?", "What drove ACME's net sales growth in fiscal 2023?"),
        (
            'Question: "What drove ACME\'s net sales growth in fiscal 2023?"\nIt was volumes.',
            "What drove ACME's net sales growth in fiscal 2023?",
        ),
        (
            "Question: What drove ACME's net sales growth in fiscal 2023?",
            "What drove ACME's net sales growth in fiscal 2023?",
        ),
        ("What drove ACME's net sales growth in fiscal 2023", None),  # not a question
        ("What does the passage say about sales?", None),  # about the passage, not the company
        ("Why did net sales reach $4,512 million in fiscal 2023?", None),  # holds its own answer
        (
            "What were net sales for the year ended December 31, 2023?",
            "What were net sales for the year ended December 31, 2023?",
        ),
        (
            "What was the change over the 12 weeks ended March 25, 2023?",
            "What was the change over the 12 weeks ended March 25, 2023?",
        ),
        ("How many shares did the Group hold on 27 May 2019?", "How many shares did the Group hold on 27 May 2019?"),
        (
            "What was the change in free cash flow from Q4 2018 to Q4 2019?",
            "What was the change in free cash flow from Q4 2018 to Q4 2019?",
        ),
        ("Why?", None),  # too short
        ("What " + "very " * 40 + "much?", None),  # too long
        ("", None),
    ],
)
def test_a_written_question_is_kept_only_as_a_user_could_have_typed_it(written: str, kept: str | None) -> None:
    assert clean_question(written, _passage()) == kept


def test_the_model_reads_the_passage_under_its_title_with_the_rules_first() -> None:
    system, user = messages(_passage())
    assert system["role"] == "system" and "Do not put the answer" in system["content"]
    assert user["content"].startswith("Passage:\nACME_2023_10K\nNet sales") and user["content"].endswith("Question:")


def test_a_document_without_a_company_is_shown_without_its_file_name_title() -> None:
    named = _passage()
    unnamed = Passage(
        "tatqa-1:0", "tatqa-1", "TAT-QA report 1a2b", "tatqa-1", 1, "", f"TAT-QA report 1a2b\n{BODY}", BODY
    )
    assert "ACME_2023_10K" in messages(named)[1]["content"]
    assert "TAT-QA" not in messages(unnamed)[1]["content"] and BODY in messages(unnamed)[1]["content"]


def test_the_sample_is_seeded_skips_short_chunks_and_spreads_over_documents() -> None:
    long = " ".join(["word"] * MIN_BODY_WORDS)
    passages = [_passage(f"big:{i}", long) for i in range(20)] + [
        _passage("small:0", long),
        _passage("tiny:0", "Total"),
    ]
    sample = sample_passages(passages, 4, seed=1)
    assert len(sample) == 4
    assert "small:0" in {p.id for p in sample}  # the 20-chunk document does not take the whole sample
    assert "tiny:0" not in {p.id for p in sample}
    assert [p.id for p in sample_passages(passages, 4, seed=1)] == [p.id for p in sample]
    assert [p.id for p in sample_passages(passages, 4, seed=2)] != [p.id for p in sample]


def test_questions_are_appended_as_they_come_and_a_second_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "generated.jsonl"
    asked: list[str] = []

    def ask(chat: list[dict[str, str]]) -> str:
        asked.append(chat[1]["content"])
        return "What drove ACME's net sales growth in fiscal 2023?" if len(asked) == 1 else "no question here"

    passages = [_passage("doc:0"), _passage("doc:1")]
    records = list(write_questions(passages[:1], ask, out, "test-model"))
    assert [r["query"] for r in records] == ["What drove ACME's net sales growth in fiscal 2023?"]
    done = {r["passage_id"] for r in read_generated(out)}
    more = list(write_questions(passages, ask, out, "test-model", skip=done))
    assert [r["passage_id"] for r in more] == ["doc:1"] and more[0]["query"] is None  # kept on file, rejected
    assert len(asked) == 2 and len(read_generated(out)) == 2
    assert read_generated(tmp_path / "missing.jsonl") == []


def _kb() -> list[Document]:
    prose = BODY + " Management expects capital spending to stay near the level of the prior year."
    pages = [Page(1, f"ACME annual report\n\n{prose}"), Page(2, prose.replace("adhesives", "sealants"))]
    other = [Page(1, "GLOBEX annual report\n\n" + prose.replace("ACME", "GLOBEX"))]
    return [
        Document("doc-ACME", "ACME_2023_10K", "acme.pdf", pages, "en", "ACME", 2023, None, ""),
        Document("doc-GLOBEX", "GLOBEX_2023_10K", "globex.pdf", other, "en", "GLOBEX", 2023, None, ""),
    ]


def test_generated_questions_become_pairs_with_negatives_and_the_leakage_gate_still_holds() -> None:
    kb = _kb()
    target = document_passages(kb)[0]
    generated = [
        {"passage_id": target.id, "written": "What drove ACME's net sales growth in fiscal 2023?", "model": "m"},
        {"passage_id": "doc-ACME:99", "written": "A question about a passage not in this KB?", "model": "m"},
        {
            "passage_id": target.id,
            "written": "Why did net sales reach $4,512 million?",
            "model": "m",
        },  # holds its answer
    ]
    pairs, stats = build_pairs(kb, EvaluationGuard([]), seed=3, generated=generated)
    made = [p for p in pairs if p.kind == "generated"]
    assert [p.query for p in made] == ["What drove ACME's net sales growth in fiscal 2023?"]
    assert made[0].positive == target.text and made[0].negatives and target.text not in made[0].negatives
    assert made[0].provenance["template"] == "generated" and made[0].provenance["model"] == "m"
    assert stats["pairs: generated en"] == 1
    # A model may write an evaluation question word for word: it is dropped like any other query.
    guard = EvaluationGuard(["What drove ACME's net sales growth in fiscal 2023?"])
    pairs, stats = build_pairs(kb, guard, seed=3, generated=generated)
    assert not [p for p in pairs if p.kind == "generated"] and stats["dropped: evaluation near copy"] >= 1
    with pytest.raises(LeakageError):
        guard.check([made[0].query])
