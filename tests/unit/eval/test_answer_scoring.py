from __future__ import annotations

from pathlib import Path

from weaverbird_eval.answers import AnswerRecord, answer_correct, evaluate, numbers, sample, unsupported_numbers
from weaverbird_eval.scoring import is_refusal, strict_correct


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
        set="financebench",
        id="q",
        question="q?",
        gold="1",
        answer="",
        strict=None,
        lenient=None,
        cited=[],
        citation_correct=None,
        evidence_in_context=False,
        answer_check="no_numbers",
        unsupported=[],
        in_no_passage=[],
        route="local",
        refused=False,
        seconds=1.0,
    )
    return AnswerRecord(**{**base, **kw})  # type: ignore[arg-type]


def test_summary_counts_only_the_questions_each_score_applies_to() -> None:
    sets = evaluate(
        [
            _record(answer="It was 5 [1]", strict=True, lenient=True, citation_correct=True, answer_check="supported"),
            _record(
                answer="It was 7 [1]",
                strict=False,
                lenient=True,
                citation_correct=False,
                answer_check="unsupported",
                unsupported=["7"],
                in_no_passage=["7"],
            ),
            _record(answer="The provided information is insufficient.", strict=False, refused=True),
            _record(set="out_of_kb", refused=True),
            _record(set="out_of_kb", route="web"),
            _record(set="out_of_kb", answer="It was 9 [1]"),
            _record(set="out_of_kb", answer="It was 5,818 [1]", strict=True),  # right from another filing
            # The calculator's result is in no passage by nature; a figure the model wrote is counted.
            _record(
                set="calc", answer="A = 5 [1]\nCalculation: A - 2 = 3", in_no_passage=["2", "3"], computed=["2", "3"]
            ),
            _record(set="calc", answer="A = 6 [1]\nCalculation: A = 6", in_no_passage=["6"]),
        ]
    )
    assert sets["calc"]["answers_with_a_figure_in_no_passage"] == 2
    assert sets["calc"]["answers_with_a_stated_figure_in_no_passage"] == 1
    s = sets["financebench"]
    assert s["scored"] == 3 and s["accuracy_strict"] == 1 / 3
    assert s["lenient_scored"] == 2 and s["accuracy_lenient"] == 1.0
    assert s["answers_citing"] == 2 and s["citation_correct"] == 0.5
    assert s["answers_with_figures"] == 2 and s["numeric_faithfulness"] == 0.5
    assert s["answers_with_a_figure_in_no_passage"] == 1 and s["refusals"] == 1
    # Under "replace" the unsupported answer (wrong anyway) is withheld: the correct one stays.
    assert s["accuracy_strict_if_replaced"] == 1 / 3
    assert sets["out_of_kb"]["refused_or_web"] == 2 / 4
    assert sets["out_of_kb"]["refused_web_or_right"] == 3 / 4  # the wrong answer is the only miss


def test_sample_spreads_over_the_list() -> None:
    assert sample(list(range(10)), 5) == [0, 2, 4, 6, 8]
    assert sample([1, 2], 5) == [1, 2]


def test_strict_scoring_wants_the_value_with_its_scale() -> None:
    assert strict_correct("about $1.58 billion [1]", "$1577.00", "What was capex (in USD millions)?") is True
    assert strict_correct("It was 1,577 [1]", "$1577.00", "What was capex (in USD millions)?") is True
    assert strict_correct("about $1.58 billion [1]", "$1577.00", "What was capex?") is False  # gold unit unknown
    assert strict_correct("It was 1,577 [1]", "$1577 million") is False  # the answer dropped "million"
    assert strict_correct("about $1.6 billion [1]", "$1577 million") is False  # 1.5 % off
    assert strict_correct("It was 66% [1]", "0.66") is True and strict_correct("24.3%", "a ratio of 24.3") is False
    assert strict_correct("净利润为79,300万元[1]", "7.93亿元") is True
    assert strict_correct("The FY2019 figure rose [1]", "24.26") is False  # a year is not the answer


def test_a_name_written_like_a_figure_matches_nothing() -> None:
    question = "Which debt securities are registered under 3M's name as of Q2 of 2023?"
    gold = "Listed under 3M's name: 1.500% Notes due 2026 and 1.750% Notes due 2030."
    assert strict_correct("The debt securities under 3M's name are [2][3].", gold, question) is False
    assert strict_correct("The 1.500% Notes due 2026 [2].", gold, question) is True
    # Elsewhere "3M" is still 3 million.
    assert strict_correct("Revenue was $3M.", "3M", "What was revenue in 2023?") is True


def test_strict_scoring_checks_yes_and_no() -> None:
    assert strict_correct("Yes, it did [1].", "Yes, the company paid a dividend.") is True
    assert strict_correct("No [1].", "Yes.") is False
    assert strict_correct("The company did not pay one [1].", "No, it did not.") is True
    assert strict_correct("Some words only.", "A qualitative answer.") is None


def test_refusals_are_recognised_in_both_languages() -> None:
    assert is_refusal("The provided information is insufficient to answer this question. It lacks X.")
    assert is_refusal("根据所提供的资料，无法回答该问题。")
    assert not is_refusal("Revenue was USD 5 million [1].")


def test_chinese_out_of_kb_questions_never_take_a_context_the_chinese_set_needs(tiny_data: Path) -> None:
    from weaverbird_eval.answers import Case, chinese_out_of_kb
    from weaverbird_eval.datasets import fineva

    queries = {q.id: q for q in fineva(tiny_data).queries}
    moutai = queries["financial_event_interpretation:1"]
    keep = [Case("chinese", moutai.id, moutai.text, "1476.9亿元", moutai.relevant)]
    out = chinese_out_of_kb(tiny_data, 5, keep)
    # The Moutai context stays (a `chinese` case needs it); fund descriptions are never asked open-ended.
    assert [c.id for c in out] == ["financial_event_interpretation:2"]
    assert out[0].set == "out_of_kb_zh" and not out[0].relevant & moutai.relevant
    assert chinese_out_of_kb(tiny_data, 0, keep) == []


def test_a_wrong_figure_shown_is_counted_apart_from_withheld_and_refused_answers() -> None:
    s = evaluate(
        [
            # A figure the passages hold, for the wrong thing: the numeric check passes it, the user sees it.
            _record(answer="Capex was 10.0 [1]", strict=False, answer_check="supported"),
            _record(answer="Capex was 1,577 [1]", strict=True, answer_check="supported"),
            _record(
                answer="The provided information is insufficient.",
                strict=False,
                withheld=True,
                answer_check="unsupported",
            ),
            _record(answer="The provided information is insufficient.", strict=False, refused=True),
            _record(answer="Yes, it did [1].", strict=False, answer_check="no_numbers"),
        ]
    )["financebench"]
    assert s["shown_with_a_wrong_figure"] == 1 and s["shown_with_unsupported_figures"] == 0


def test_what_the_check_acted_on_is_counted_before_it_acted_and_citations_over_every_answer() -> None:
    insufficient = "The provided information is insufficient."
    s = evaluate(
        [
            # Withheld: unsupported before the check, and its own citation still judged.
            _record(
                answer=insufficient, refused=True, withheld=True, answer_check="unsupported", citation_correct=True
            ),
            # Shown with an unsupported figure, citing the wrong passage.
            _record(answer="It was 7 [2]", answer_check="unsupported", citation_correct=False),
            # Answered citing nothing: counted, and not correct.
            _record(answer="It was 5.", answer_check="supported"),
            # The user saw the insufficient sentence though the done event listed a figure: not shown, not answered.
            _record(answer=insufficient, refused=True, answer_check="unsupported", unsupported=["5.77%"]),
        ]
    )["financebench"]
    assert s["unsupported_before_check"] == 2 and s["withheld"] == 1
    assert s["shown_with_unsupported_figures"] == 1
    assert s["answered"] == 3 and s["citation_correct"] == 1 / 3
    assert s["answers_citing"] == 2 and s["citation_correct_among_citing"] == 0.5
