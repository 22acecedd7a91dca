"""The figures step's format: what the generator's prompt asks for is what the orchestrator reads."""

from __future__ import annotations

from typing import Literal

import pytest
from weaverbird_common.calc_format import (
    FigureLine,
    figure_line,
    formula_line,
    is_missing_line,
    missing_line,
    parse_figures,
    read_figure_line,
    read_formula_line,
)
from weaverbird_generator.tasks import figures
from weaverbird_generator.tasks.common import TaskRequest


def test_lines_written_by_the_helpers_read_back() -> None:
    text = "\n".join(
        [
            figure_line("A", "revenue 2024", "USD 1,284.6 million", 1),
            figure_line("B", "revenue 2023", "USD 1,102.9 million", 2),
            formula_line("(A - B) / B * 100"),
        ]
    )
    parsed, formula = parse_figures(text)
    assert parsed == [
        FigureLine("A", "revenue 2024", "USD 1,284.6 million", 1),
        FigureLine("B", "revenue 2023", "USD 1,102.9 million", 2),
    ]
    assert formula == "(A - B) / B * 100"


def test_reading_tolerates_a_small_models_decoration_and_keeps_the_first_line_per_letter() -> None:
    parsed, formula = parse_figures("- **A**: 营业收入 = 41.73亿元 【1】\nA: other = 2 [2]\nSome prose.\n公式：`A / 2`")
    assert parsed == [FigureLine("A", "营业收入", "41.73亿元", 1)]
    assert formula == "A / 2"
    assert read_figure_line("Formula: A - B") is None
    assert read_formula_line("A: revenue = 5 [1]") is None


def test_missing_is_recognised_as_written() -> None:
    assert is_missing_line(missing_line("revenue 2023"))
    assert is_missing_line("  missing: revenue 2023")
    assert not is_missing_line(figure_line("A", "revenue", "5", 1))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_generator_prompt_uses_the_shared_keys(language: Literal["en", "zh"]) -> None:
    request = TaskRequest(question="q", passages=(), language=language)
    system = figures.build_messages(request)[0]["content"]
    assert formula_line("<") in system and missing_line("<") in system
    assert "A: <" in system and "> = <" in system
