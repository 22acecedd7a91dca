from __future__ import annotations

from weaverbird_eval.answers import AnswerRecord, answer_correct, evaluate, numbers, sample, unsupported_numbers


def test_numbers_apply_scale_words_and_skip_citation_markers() -> None:
    assert numbers("Revenue was $1,577 million [1], up 3.5% in FY2018 [2, 3].") == [1.577e9, 3.5, 2018.0]
    assert numbers("a loss of -12.5 and 0.66") == [-12.5, 0.66]


def test_accuracy_tolerates_rounding_scale_and_percent_forms() -> None:
    assert answer_correct("about $1.58 billion [1]", "$1577.00") is True
    assert answer_correct("The ratio is 24.3 [2]", "The FY2019 fixed asset turnover ratio is 24.26") is True
    assert answer_correct("It was 66% [1]", "0.66") is True
    assert answer_correct("It was 71% [1]", "0.66") is False
    assert answer_correct("Revenue rose in 2019", "The FY2019 ratio is 24.26") is False  # years are not the answer
    assert answer_correct("Yes [1]", "Yes, it did.") is None  # not a numeric question


def test_unsupported_numbers_are_those_in_no_cited_passage_nor_the_question() -> None:
    passages = ["Net sales were 1,577 (in millions) and rose 8%."]
    assert unsupported_numbers("Sales were $1,577 million in 2022, up 8% [1].", "What in FY2022?", passages) == []
    assert unsupported_numbers("Sales were 1,600 [1].", "What in FY2022?", passages) == [1600.0]


def _record(**kw: object) -> AnswerRecord:
    base = dict(
        id="q",
        question="q?",
        gold="1",
        answer="",
        correct=None,
        cited=[],
        citation_correct=None,
        evidence_in_context=False,
        unsupported=[],
        refused=False,
        seconds=1.0,
    )
    return AnswerRecord(**{**base, **kw})  # type: ignore[arg-type]


def test_summary_counts_only_the_questions_each_score_applies_to() -> None:
    s = evaluate(
        [
            _record(answer="It was 5 [1]", correct=True, citation_correct=True, evidence_in_context=True),
            _record(answer="It was 7 [1]", correct=False, citation_correct=False, unsupported=[7.0]),
            _record(answer="The provided information is insufficient.", refused=True),
        ]
    )
    assert s["numeric_questions"] == 2 and s["accuracy_numeric"] == 0.5
    assert s["answers_citing"] == 2 and s["citation_correct"] == 0.5
    assert s["answers_with_numbers"] == 2 and s["numeric_faithfulness"] == 0.5
    assert s["refusals"] == 1


def test_sample_spreads_over_the_list() -> None:
    assert sample(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert sample([1, 2], 5) == [1, 2]
