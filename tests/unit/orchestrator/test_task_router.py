"""Task routing rules and the example banks' similarity choice."""

from __future__ import annotations

import pytest
from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.tasks.examples import ExampleBank, default_bank
from weaverbird_orchestrator.tasks.router import classify, parse_task_word


@pytest.mark.parametrize(
    ("question", "task"),
    [
        ("What was Northwind Robotics' revenue in fiscal 2024?", Task.LOOKUP),
        ("华岳银行2024年第三季度末的不良贷款率是多少？", Task.LOOKUP),
        ("How much did revenue grow from 2023 to 2024?", Task.CALCULATION),
        ("2023年可供分配利润比2022年低多少？", Task.CALCULATION),
        ("Extract the fund's holdings as {stock name: NAV share %}", Task.EXTRACTION),
        ("以JSON格式提取前十大持仓", Task.EXTRACTION),
        ("Plot the revenue trend as a line chart", Task.ANALYSIS),
        ("分析该基金的资产配置并画饼图", Task.ANALYSIS),
    ],
)
def test_rules_read_the_task_from_the_wording(question: str, task: Task) -> None:
    choice = classify(question)
    assert choice.task is task
    assert bool(choice.evidence) == (task is not Task.LOOKUP)


def test_the_model_word_is_parsed_or_rejected() -> None:
    assert parse_task_word("Calculation.") is Task.CALCULATION
    assert parse_task_word("json") is Task.EXTRACTION
    assert parse_task_word("I think so") is None


def test_examples_are_chosen_by_similarity_within_task_and_language() -> None:
    bank = ExampleBank.from_lines(
        {
            Task.CALCULATION: [
                '{"language": "en", "question": "<information>x</information> What was the growth?", "answer": "g"}',
                '{"language": "en", "question": "<information>x</information> What is the debt ratio?", "answer": "d"}',
                '{"language": "zh", "question": "增长率是多少？", "answer": "z"}',
            ]
        }
    )
    assert [e.answer for e in bank.select(Task.CALCULATION, "en", "What is the equity ratio?", 2)] == ["d", "g"]
    assert [e.answer for e in bank.select(Task.CALCULATION, "zh", "增长率？", 5)] == ["z"]
    assert bank.select(Task.ANALYSIS, "en", "anything", 2) == []


def test_shipped_banks_have_ten_examples_per_task_and_language() -> None:
    bank = default_bank()
    for task in (Task.CALCULATION, Task.EXTRACTION, Task.ANALYSIS):
        for language in ("en", "zh"):
            assert bank.count(task, language) >= 10, (task, language)
