"""Few-shot example banks: the choice by similarity, loading (a missing or bad file does not take the others
down), and the shipped banks themselves (enough examples, figures only from their own passages)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from shipped_banks import shipped_rows
from weaverbird_orchestrator.domain import Task
from weaverbird_orchestrator.numeric_check import INSUFFICIENT, check_answer
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.tasks.examples import ExampleBank, default_bank, load_bank, request_part


def _line(language: str, question: str, answer: str) -> str:
    return json.dumps({"language": language, "question": question, "answer": answer}, ensure_ascii=False)


def _bank(task: Task, *examples: tuple[str, str, str]) -> ExampleBank:
    """A bank holding `examples` (language, question, answer) for `task` only, in this order."""
    return ExampleBank.from_lines({task: [_line(*example) for example in examples]})


def test_examples_are_chosen_by_similarity_within_task_and_language() -> None:
    bank = _bank(
        Task.CALCULATION,
        ("en", "<information>x</information> What was the growth?", "g"),
        ("en", "<information>x</information> What is the debt ratio?", "d"),
        ("zh", "增长率是多少？", "z"),
    )
    assert [e.answer for e in bank.select(Task.CALCULATION, "en", "What is the equity ratio?", 2)] == ["d", "g"]
    assert [e.answer for e in bank.select(Task.CALCULATION, "zh", "增长率？", 5)] == ["z"]
    assert bank.select(Task.ANALYSIS, "en", "anything", 2) == []
    assert bank.select(Task.CALCULATION, "en", "What is the equity ratio?", 0) == []


def test_fixed_examples_are_the_banks_first_whatever_the_question() -> None:
    # The served default: a prompt prefix that never varies, so the model server's cache keeps it.
    bank = _bank(
        Task.CALCULATION,
        ("en", "<information>x</information> What was the growth?", "g"),
        ("zh", "增长率是多少？", "z"),
        ("en", "<information>x</information> What is the debt ratio?", "d"),
        ("en", "<information>x</information> What is the margin?", "m"),
    )
    assert [e.answer for e in bank.first(Task.CALCULATION, "en", 2)] == ["g", "d"]
    assert [e.answer for e in bank.first(Task.CALCULATION, "zh", 2)] == ["z"]
    assert bank.first(Task.ANALYSIS, "en", 2) == [] and bank.first(Task.CALCULATION, "en", 0) == []
    assert OrchestratorSettings(embedder_addr="e:1", retriever_addr="r:1", generator_addr="g:1").few_shot_selection == (
        "fixed"
    )


def test_the_examples_passages_do_not_count_towards_similarity() -> None:
    # The first example's passage shares many words with the question; its request shares none.
    bank = _bank(
        Task.LOOKUP,
        ("en", "<information>auditor of the company audited</information> How many staff?", "staff"),
        ("en", "<information>unrelated</information> Who audited the company?", "audit"),
    )
    assert bank.select(Task.LOOKUP, "en", "Who audited Ferrow Ltd?", 1)[0].answer == "audit"
    assert request_part("<information>\nabc\n</information>\n\nWho?") == "Who?"


def test_rare_bigrams_outweigh_common_phrasing() -> None:
    # The question shares as much text with the first example ("kkkk", as in three examples) as with the
    # second ("zzzz", in that one only): plain bigram counts tie, and the tie would keep the file order.
    # Weighted by rarity within the bank, the rare shared text decides.
    bank = _bank(
        Task.LOOKUP,
        ("en", "kkkk qqqq", "common"),
        ("en", "zzzz wwww", "rare"),
        ("en", "kkkk rrrr", "c"),
        ("en", "kkkk ssss", "d"),
    )
    assert bank.select(Task.LOOKUP, "en", "kkkk zzzz", 1)[0].answer == "rare"


def test_ties_keep_the_file_order() -> None:
    lines = [_line("zh", "同一个问题？", str(i)) for i in range(4)]
    bank = ExampleBank.from_lines({Task.LOOKUP: lines})
    assert [e.answer for e in bank.select(Task.LOOKUP, "zh", "同一个问题？", 3)] == ["0", "1", "2"]
    assert [e.answer for e in bank.select(Task.LOOKUP, "zh", "毫不相干", 4)] == ["0", "1", "2", "3"]


def test_bad_lines_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    lines = [
        "{not json",
        _line("fr", "Quel est le chiffre d'affaires ?", "x"),
        json.dumps({"language": "en", "question": "Q?"}),
        "",
        _line("en", "What was revenue?", "kept"),
    ]
    with caplog.at_level(logging.WARNING):
        bank = ExampleBank.from_lines({Task.LOOKUP: lines})
    assert bank.count(Task.LOOKUP, "en") == 1 and bank.count(Task.LOOKUP, "zh") == 0
    assert [e.answer for e in bank.select(Task.LOOKUP, "en", "revenue", 3)] == ["kept"]
    assert sum("skipped" in r.getMessage() for r in caplog.records) == 3


def test_a_folder_without_some_task_files_loads_the_others(tmp_path: Path) -> None:
    (tmp_path / "lookup.jsonl").write_text(_line("en", "What was revenue?", "r") + "\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a bank", encoding="utf-8")
    bank = load_bank(tmp_path)
    assert bank.count(Task.LOOKUP, "en") == 1
    assert all(bank.count(task, lang) == 0 for task in Task if task is not Task.LOOKUP for lang in ("en", "zh"))


def _shipped_lines() -> dict[Task, list[str]]:
    from importlib import resources

    folder = resources.files("weaverbird_orchestrator.tasks") / "data" / "examples"
    return {
        task: (folder / f"{task.value}.jsonl").read_text(encoding="utf-8").splitlines()
        for task in Task
        if (folder / f"{task.value}.jsonl").is_file()
    }


def test_shipped_banks_parse_whole_and_hold_ten_examples_per_task_and_language(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        ExampleBank.from_lines(_shipped_lines())
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    bank = default_bank()
    for task in Task:
        for language in ("en", "zh"):
            assert bank.count(task, language) >= 10, (task, language)


_PASSAGE = re.compile(r'<passage id="(\d+)"[^>]*>\n?(.*?)\n?</passage>', re.DOTALL)


def _lookup_rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in _shipped_lines()[Task.LOOKUP] if line.strip()]


@pytest.mark.parametrize("row", _lookup_rows(), ids=lambda r: request_part(r["question"])[:40])
def test_lookup_examples_cite_their_own_passages_and_copy_their_figures(row: dict[str, str]) -> None:
    passages = _PASSAGE.findall(row["question"])
    assert passages and [int(n) for n, _ in passages] == list(range(1, len(passages) + 1))
    assert request_part(row["question"]), "the example must ask something after its passages"
    answer = row["answer"]
    if answer.startswith(INSUFFICIENT[row["language"]]):
        assert not re.search(r"\[\d+\]", answer)
        return
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", answer)}
    assert cited and cited <= set(range(1, len(passages) + 1))
    # Every figure in the answer is in the passage it cites (the numeric check the served answers get).
    check = check_answer(answer, [text for _, text in passages])
    assert check.cited and not check.unsupported, check


def test_lookup_bank_teaches_refusal_in_both_languages() -> None:
    for language in ("en", "zh"):
        rows = [r for r in _lookup_rows() if r["language"] == language]
        assert any(r["answer"].startswith(INSUFFICIENT[language]) for r in rows), language
        assert sum(not r["answer"].startswith(INSUFFICIENT[language]) for r in rows) >= 10, language


@pytest.mark.parametrize("task", ["analysis", "extraction"])
def test_bank_has_ten_examples_per_language_in_the_line_format(task: str) -> None:
    rows = shipped_rows(task)
    assert all(set(r) == {"language", "question", "answer"} for r in rows)
    assert sum(r["language"] == "en" for r in rows) >= 10 and sum(r["language"] == "zh" for r in rows) >= 10
