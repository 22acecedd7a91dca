"""Name questions ("which ...?", "what was the largest liability?") and answers that restate them."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.name_answer import asks_for_name, echoes_name_question, lists_nothing, names_nothing


@pytest.mark.parametrize(
    "question",
    [
        "What was the largest liability in Larkspur Freight's balance sheet in 2024?",
        "Which type of debt received the largest investment among the short term investments in H1 FY2024?",
        "Who are the primary customers of Larkspur Freight as of FY2024?",
        "What industry does Larkspur Freight primarily operate in?",
        "What is the nature of the restructuring liability as of Q2 FY2024?",
        "Which segment will be treated as a discontinued operation?",
        "What are major acquisitions that Larkspur Freight has done in FY2024, FY2023 and FY2022?",
    ],
)
def test_questions_asking_for_a_name(question: str) -> None:
    assert asks_for_name(question)


@pytest.mark.parametrize(
    "question",
    [
        "What was the highest quarterly revenue of Larkspur Freight in 2024?",  # a line item: a figure
        "What was the largest amount repaid on the term loan in 2024?",  # a measure word
        "How much did Larkspur Freight pay in dividends in FY2024?",
        "Among operations, investing, and financing activities, which brought in the most cash in FY2024?",
        "Which was larger in 2024, revenue or operating costs?",  # the choices are in the question
        "哪个业务板块的收入最高？",  # Chinese is not read
        "Which years does the table provide information for net sales by region?",  # a period: digits answer it
        "What was the product percentage of revenue in 2024?",  # a measure of the kind
    ],
)
def test_questions_asking_for_a_figure_or_offering_choices(question: str) -> None:
    assert not asks_for_name(question)


def test_an_answer_restating_the_question_around_a_figure_names_nothing() -> None:
    question = "What was the largest liability in Larkspur Freight's balance sheet in 2024?"
    echo = "The largest liability in Larkspur Freight's balance sheet in 2024 was $37,350 [3]."
    assert echoes_name_question(echo, question)
    # Plural and hyphen forms of the question's own words are still its words.
    assert names_nothing("Larkspur Freight's largest liabilities in 2024 were USD 37.4 billion [1].", question)


def test_amounts_for_names_name_nothing() -> None:
    question = "What are major acquisitions that Larkspur Freight has done in FY2024 and FY2023?"
    assert echoes_name_question("Larkspur Freight made major acquisitions of $526 million in FY2024 [1].", question)
    named = "In FY2024 Larkspur Freight acquired Harbor Logistics for $526 million [1]."
    assert not echoes_name_question(named, question)


def test_an_answer_naming_the_item_is_kept() -> None:
    question = "What was the largest liability in Larkspur Freight's balance sheet in 2024?"
    assert not echoes_name_question("Customer deposits, USD 110,239 million [2], were the largest liability.", question)
    choice = "Among operations, investing, and financing activities, which brought in the most cash in FY2024?"
    assert not echoes_name_question("Operating activities brought in $1,824 million [1].", choice)


def test_an_echo_to_a_figure_question_is_an_answer() -> None:
    question = "What was the highest quarterly revenue of Larkspur Freight in 2024?"
    echo = "The highest quarterly revenue of Larkspur Freight in 2024 was $5.2 billion [1]."
    assert not echoes_name_question(echo, question)


@pytest.mark.parametrize(
    "answer",
    [
        "The primary customers of Larkspur Freight in FY2024 were the following: [1] [2] [3].",
        "Larkspur Freight operates in several regions, including [1].",
        "The expected payments are as follows: [2]",
        "主要客户如下：[1]",
        "公司的主营业务包括【1】。",
    ],
)
def test_a_lead_in_whose_items_are_only_markers_lists_nothing(answer: str) -> None:
    assert lists_nothing(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Larkspur Freight acquired three companies: Harbor Logistics, Tern Air and Quayside [1].",
        "Its main products include pallet trackers [1].",
        "Revenue was USD 5.2 million [1]. The drivers were: [2].",  # says something before the lead-in
        "Regions:\n- Americas [1]\n- Europe [2]",
        "The provided information is insufficient to answer this question.",
    ],
)
def test_an_answer_naming_its_items_lists_something(answer: str) -> None:
    assert not lists_nothing(answer)
