"""A calculation over a KB table is answered from the table's rows in code (table_path), citing the
passage, before any model call; a question its rows do not answer, a web page, a refusal or a lookup keeps
the model's path. Tables written for the test; values hand-computed."""

from __future__ import annotations

import pytest
from fixtures.fake_peers import FakePeers, fake_settings, given_params
from weaverbird_orchestrator import table_path
from weaverbird_orchestrator.domain import Passage, Task
from weaverbird_orchestrator.events import DoneEvent, TokenEvent
from weaverbird_orchestrator.flow import QuestionFlow

TABLE = """Deferred revenue and receivables (in thousands)

| | 2019 | 2018 |
|---|---|---|
| Current deferred revenue | 4,483 | 3,910 |
| Non-current deferred revenue | 3,444 | 2,875 |
| Total receivables, net | 27,579 | 25,893 |
| Dividends paid | 28,128 | 25,633 |
"""


def _passage(text: str = TABLE, origin: str = "local", n: int = 1) -> Passage:
    return Passage(f"p{n}", text, 0.8, f"doc-{n}", "Harrow Mills Annual Report 2019", f"s{n}", 12, origin)


PROSE = _passage("Harrow Mills grew its dealer network across the region in 2019.", n=2)


@pytest.mark.parametrize(
    ("question", "value", "shown"),
    [
        (
            "What is the percentage change in the total dividends paid from 2018 to 2019?",
            (28128 - 25633) / 25633 * 100,
            "Percentage change in Dividends paid (FY2018 -> FY2019): 9.73 % [1].",
        ),
        (
            "What is the ratio of current deferred revenue to non-current deferred revenue in 2019?",
            4483 / 3444,
            "Current deferred revenue / Non-current deferred revenue (FY2019): 1.30 [1].",
        ),
        (
            "What was the change in total receivables, net between 2018 and 2019?",
            (27579 - 25893) * 1e3,
            "Change in Total receivables, net (FY2018 -> FY2019): 1,686 thousand [1].",
        ),
        (
            "What was the average dividends paid in 2018 and 2019?",
            (28128 + 25633) / 2 * 1e3,
            "Average of Dividends paid (FY2018, FY2019): 26,880.5 thousand [1].",
        ),
    ],
)
def test_a_calculation_is_read_from_the_rows_the_question_names(question: str, value: float, shown: str) -> None:
    reply = table_path.answer_from_tables(question, [PROSE, _passage()], "en")
    assert reply is not None
    assert reply.answer.value == pytest.approx(value, rel=1e-6)
    assert reply.text.splitlines()[0] == shown
    assert "Formula: " in reply.text and "Figures: " in reply.text
    assert reply.passages == [_passage()]  # [1] is the table's own passage
    assert set(reply.numbers) == {1}


@pytest.mark.parametrize(
    "question",
    [
        "What were the total receivables, net in 2019?",  # one cell: a lookup the passage path answers
        "What was the change in inventories from 2018 to 2019?",  # no such row
        "Why did deferred revenue grow in 2019?",
    ],
)
def test_a_question_the_rows_do_not_answer_is_left_to_the_model(question: str) -> None:
    assert table_path.answer_from_tables(question, [_passage()], "en") is None


def test_a_question_routed_as_a_lookup_is_answered_only_where_it_asks_for_a_combination_outright() -> None:
    ratio = "What is the ratio of current deferred revenue to non-current deferred revenue in 2019?"
    assert table_path.answer_from_tables(ratio, [_passage()], "en", lookup=True) is not None
    summed = "What were the dividends paid in 2018 and 2019 combined?"
    reply = table_path.answer_from_tables(summed, [_passage()], "en", lookup=True)
    assert reply is not None and reply.answer.value == pytest.approx((28128 + 25633) * 1e3)
    # "total" names rows as often as it asks for a sum; a move read as a lookup is left to the passages.
    both = "What were the total dividends paid in 2018 and 2019?"
    assert table_path.answer_from_tables(both, [_passage()], "en") is not None  # routed as a calculation
    assert table_path.answer_from_tables(both, [_passage()], "en", lookup=True) is None
    change = "What was the change in total receivables, net between 2018 and 2019?"
    assert table_path.answer_from_tables(change, [_passage()], "en", lookup=True) is None


def test_only_the_first_local_passages_are_read() -> None:
    question = "What is the percentage change in the total dividends paid from 2018 to 2019?"
    assert table_path.answer_from_tables(question, [_passage(origin="web")], "en") is None
    far = [PROSE] * table_path.TABLE_PASSAGES + [_passage()]
    assert table_path.answer_from_tables(question, far, "en") is None


class TablePeers(FakePeers):
    def __init__(self, hits: list[Passage]) -> None:
        super().__init__(hits, ["The model's answer."])


async def _ask(peers: TablePeers, question: str, task: Task = Task.CALCULATION, **fields: object) -> list[object]:
    options = {"top_k": 2, "threshold": 0.1, "task": task, "filters": {"company": "HARROW_MILLS"}, **fields}
    params = given_params(question, **options)
    return [event async for event in QuestionFlow(peers, fake_settings(few_shot_examples=0)).ask(params)]


def _text(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TokenEvent))


async def test_the_served_calculation_comes_from_the_table_without_the_model() -> None:
    peers = TablePeers([_passage()])
    events = await _ask(peers, "What is the percentage change in the total dividends paid from 2018 to 2019?")
    assert _text(events).startswith("Percentage change in Dividends paid (FY2018 -> FY2019): 9.73 % [1].")
    assert peers.generated_from == []  # no model call
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.extras.calculation is not None
    assert [f.passage for f in done.extras.calculation.figures] == [1, 1]


async def test_a_lookup_or_a_request_without_facts_keeps_the_models_path() -> None:
    question = "What is the percentage change in the total dividends paid from 2018 to 2019?"
    peers = TablePeers([_passage()])
    await _ask(peers, question, task=Task.LOOKUP)
    assert len(peers.generated_from) == 1
    peers = TablePeers([_passage()])
    ratio = "What is the ratio of current deferred revenue to non-current deferred revenue in 2019?"
    events = await _ask(peers, ratio, task=Task.LOOKUP)
    assert _text(events).startswith("Current deferred revenue / Non-current deferred revenue (FY2019): 1.30 [1].")
    assert peers.generated_from == []
    peers = TablePeers([_passage()])
    events = await _ask(peers, question, facts=False)
    assert "9.73" not in _text(events)


async def test_a_question_the_kb_does_not_cover_is_not_answered_from_its_tables() -> None:
    # The best passage scores below c and no web path is configured: the route is not local.
    peers = TablePeers([_passage()])
    events = await _ask(
        peers, "What is the percentage change in the total dividends paid from 2018 to 2019?", threshold=0.95
    )
    assert "9.73" not in _text(events)


async def test_a_question_naming_no_company_is_not_answered_from_a_table() -> None:
    # Without a company the top passages may be any report's table with the same row names.
    peers = TablePeers([_passage()])
    events = await _ask(
        peers, "What is the percentage change in the total dividends paid from 2018 to 2019?", filters={}
    )
    assert "9.73" not in _text(events) and len(peers.generated_from) >= 1


def test_text_extracted_from_a_pdf_is_not_read_as_a_table() -> None:
    # pypdf lines: the reader would have to guess the columns; only pipe tables are read.
    pdf_text = "Dividends and receivables\n(in thousands) 2019 2018\nDividends paid 28,128 25,633\n"
    question = "What is the percentage change in the total dividends paid from 2018 to 2019?"
    assert table_path.answer_from_tables(question, [_passage(pdf_text)], "en") is None
    assert table_path.answer_from_tables(question, [_passage()], "en") is not None


def test_a_schedule_that_names_no_date_is_answered_without_a_period() -> None:
    table = (
        "| Days past due | Current | 1-90 days | Total |\n|---|---|---|---|\n"
        "| Net receivables | 23,524 | 1,965 | 27,579 |\n"
    )
    question = "What was the difference between total net receivables and current net receivables?"
    reply = table_path.answer_from_tables(question, [_passage(table)], "en")
    assert reply is not None and reply.answer.value == pytest.approx(27579 - 23524)
    assert reply.text.splitlines()[0] == "Total Net receivables - Current Net receivables: 4,055 [1]."
    assert "FY0" not in reply.text and "(date not stated)" in reply.text
