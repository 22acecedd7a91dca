"""The form a question asks for, told to the model: yes or no first, or the name asked for."""

from __future__ import annotations

import re

import pytest
from fixtures.fake_peers import FakePeers, fake_settings, given_params, local_passage
from weaverbird_orchestrator.answer_form import FORMS, asks_yes_no, form_instruction
from weaverbird_orchestrator.flow import QuestionFlow


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Did Larkspur Freight pay a dividend in FY2024?", "en"),
        ("Looking at VaR, did the risk Larkspur faced in Q2 2024 decrease against Q2 2023?", "en"),
        ("Was there any change in the number of stores between FY2023 and FY2024? Explain.", "en"),
        ("云杉物流是否派发了现金股利？", "zh"),
        ("华为是云杉物流的主要客户吗？", "zh"),
    ],
)
def test_yes_no_questions(question: str, language: str) -> None:
    assert asks_yes_no(question, language)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Did the wages share of net sales increase or decrease in FY2024?", "en"),  # two answers offered
        ("What was Larkspur Freight's revenue in FY2024?", "en"),
        ("How much did Larkspur Freight pay in dividends? Is that more than in FY2023?", "en"),  # first sentence
        ("云杉物流的营业收入是多少？", "zh"),
        ("云杉物流的收入是增长还是下降？", "zh"),
    ],
)
def test_other_questions(question: str, language: str) -> None:
    assert not asks_yes_no(question, language)


def test_the_line_for_each_form() -> None:
    assert form_instruction("Did Larkspur pay a dividend?", "en") == FORMS[("yes_no", "en")]
    assert form_instruction("云杉物流是否派发了现金股利？", "zh") == FORMS[("yes_no", "zh")]
    assert form_instruction("What was the largest liability of Larkspur in 2024?", "en") == FORMS[("name", "en")]
    assert form_instruction("What was Larkspur's revenue in 2024?", "en") == ""
    # No line may hold a figure the model could copy into an answer.
    assert not any(re.search(r"\d", line) for line in FORMS.values())


async def test_the_lookup_tells_the_generator_the_form_unless_turned_off() -> None:
    hits = [local_passage(1, "Larkspur Freight paid a dividend of USD 1.20 per share in fiscal 2024.", 0.8)]
    params = given_params("Did Larkspur Freight pay a dividend in fiscal 2024?")
    for on, expected in ((True, FORMS[("yes_no", "en")]), (False, "")):
        peers = FakePeers(hits, ["Yes, USD 1.20 per share [1]."])
        _ = [e async for e in QuestionFlow(peers, fake_settings(answer_form=on)).ask(params)]
        assert peers.instructions == [expected]
