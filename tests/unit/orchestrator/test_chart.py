"""Chart data: the model's output read into a spec, values checked against the passage they belong to,
the chart type chosen from the question or the data, one repair call, and the few-shot bank."""

from __future__ import annotations

import json
import math
import re

import pytest
from fixtures.task_generator import ScriptedGenerator
from shipped_banks import shipped_rows
from weaverbird_orchestrator.domain import Example, Passage
from weaverbird_orchestrator.tasks.chart import (
    ChartSeries,
    chart_spec,
    choose_type,
    named_type,
    period_key,
    read_value,
    spec_from_output,
)

TABLE = "(in millions) | 2021 | 2020 | 2019\nRevenue | 812.4 | 760.9 | 702.15\nOperating income | 96.3 | 88.7 | 71.2"
SECTORS = (
    "前三季度，第一产业实现增加值1376.4亿元，增长3.4%；第二产业实现增加值10373.4亿元；第三产业实现增加值11903.4亿元。"
)


def _output(categories: list[str], *series: tuple[str, list, int], **extra: str) -> str:
    return json.dumps(
        {
            **extra,
            "categories": categories,
            "series": [{"name": n, "values": v, "passage": p} for n, v, p in series],
        },
        ensure_ascii=False,
    )


# ---------------------------------------------------------------------------------------------
# Chart type and periods
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("2019", (2019, 0)),
        ("FY2019", (2019, 0)),
        ("2019年", (2019, 0)),
        ("Q3 2020", (2020, 9)),
        ("2020Q3", (2020, 9)),
        ("2023年第三季度", (2023, 9)),
        ("Jan 2021", (2021, 1)),
        ("December 31, 2019", (2019, 12)),
        ("2021年3月", (2021, 3)),
        ("H1 2022", (2022, 6)),
        ("2022年下半年", (2022, 12)),
        ("一季度", (0, 3)),
        ("Fixed Price", None),
        ("第一产业", None),
        ("1", None),
    ],
)
def test_period_key(label: str, key: tuple[int, int] | None) -> None:
    assert period_key(label) == key


@pytest.mark.parametrize(
    ("question", "chart_type"),
    [
        ("Plot it as a pie chart", "pie"),
        ("用饼图展示", "pie"),
        ("Show the trend in margin", "line"),
        ("画出毛利率的走势", "line"),
        ("Draw a bar chart", "bar"),
        ("用柱状图比较", "bar"),
        ("Chart revenue by segment", None),
    ],
)
def test_named_type(question: str, chart_type: str | None) -> None:
    assert named_type(question) == chart_type


def _series(*values: float) -> list[ChartSeries]:
    return [ChartSeries("s", tuple(values))]


def test_type_from_the_data_when_the_question_names_none() -> None:
    assert choose_type("Chart revenue", ["2019", "2020", "2021"], _series(1, 2, 3))[0] == "line"
    assert choose_type("Chart the share of each region", ["A", "B"], _series(60, 40))[0] == "pie"
    assert choose_type("展示各渠道的占比", ["线下", "线上"], _series(60, 40))[0] == "pie"
    assert choose_type("Chart revenue by segment", ["A", "B"], _series(60, 40))[0] == "bar"
    # A total is not a part of the whole.
    assert choose_type("Chart the share of each region", ["A", "Total"], _series(60, 100))[0] == "bar"


def test_a_pie_needs_one_series_of_non_negative_values() -> None:
    chart_type, why = choose_type("pie chart please", ["A", "B"], _series(5, -2))
    assert chart_type == "bar" and "non-negative" in why
    two = [ChartSeries("a", (1, 2)), ChartSeries("b", (3, 4))]
    assert choose_type("pie chart please", ["A", "B"], two)[0] == "bar"


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def test_read_value_keeps_the_figure_as_written_with_its_scale_and_unit() -> None:
    v = read_value("12.8亿元")
    assert v is not None and (v.raw, v.scale, v.label) == (12.8, 1e8, "亿元")
    pct = read_value("5.6%")
    assert pct is not None and pct.percent and pct.raw == 5.6
    negative = read_value("(1,234)")
    assert negative is not None and negative.raw == -1234
    year_like = read_value("2100美元/吨")  # numeric_check would skip it as a year
    assert year_like is not None and year_like.raw == 2100 and year_like.label == "美元/吨"
    assert read_value("n/a") is None and read_value(math.nan) is None and read_value(True) is None


# ---------------------------------------------------------------------------------------------
# From output to spec
# ---------------------------------------------------------------------------------------------


def test_a_good_output_becomes_a_spec_in_time_order() -> None:
    text = _output(["2021", "2020", "2019"], ("Revenue", ["812.4", "760.9", "702.15"], 1), title="Revenue")
    out = spec_from_output(f"```json\n{text}\n```", "Chart revenue", [TABLE])
    assert out.spec is not None and out.errors == ()
    assert out.spec.type == "line" and out.spec.categories == ("2019", "2020", "2021")
    assert out.spec.series[0].values == (702.15, 760.9, 812.4) and out.spec.series[0].passages == (1,)
    assert any("time order" in n for n in out.notes) and any("code fence" in n for n in out.notes)


def test_a_value_from_another_row_or_column_is_dropped_with_its_category() -> None:
    # 88.7 is in the 2020 column but in the operating income row; 760.9 is revenue, but for 2020.
    # "Asia" is named nowhere: a label copied from an example, say. Only 2021 is left: no chart.
    text = _output(["2021", "2020", "2019", "Asia"], ("Revenue", ["812.4", "88.7", "760.9", "702.15"], 1))
    out = spec_from_output(text, "Chart revenue", [TABLE])
    assert out.spec is None
    errors = "\n".join(out.errors)
    assert "88.7 is not in this series' row" in errors
    assert "760.9 is not stated for this category" in errors
    assert '"Asia": 702.15 belongs to a category the passages do not name' in errors
    assert "1 of 4 categories left" in errors


def test_a_value_in_no_passage_is_dropped_and_too_few_left_is_no_chart() -> None:
    text = _output(["2021", "2020", "2019"], ("Revenue", ["812.4", "760.9", "999"], 1))
    out = spec_from_output(text, "Chart revenue", [TABLE])
    assert out.spec is not None and out.spec.categories == ("2020", "2021")
    assert any("999 is not in the passages" in e for e in out.errors)
    one_left = _output(["2021", "2020"], ("Revenue", ["812.4", "999"], 1))
    none = spec_from_output(one_left, "Chart revenue", [TABLE])
    assert none.spec is None and any("too few" in e for e in none.errors)


def test_a_series_with_nothing_usable_goes_without_taking_the_categories() -> None:
    text = _output(
        ["Revenue", "Operating income"], ("2021", ["812.4", "96.3"], 1), ("Label", ["Revenue", "Operating income"], 1)
    )
    out = spec_from_output(text, "Chart 2021", [TABLE])
    assert out.spec is not None and [s.name for s in out.spec.series] == ["2021"]
    assert out.spec.categories == ("Revenue", "Operating income")
    assert any('series "Label" dropped' in e for e in out.errors)


def test_mixed_scales_are_put_on_one_and_the_unit_follows() -> None:
    passage = "甲公司营业收入3.72亿元，乙公司营业收入4919.50万元，丙公司营业收入1.05亿元。"
    text = _output(["甲公司", "乙公司", "丙公司"], ("营业收入", ["3.72亿元", "4919.50万元", "1.05亿元"], 1))
    out = spec_from_output(text, "比较营业收入", [passage])
    assert out.spec is not None and out.spec.unit == "亿元"
    assert out.spec.series[0].values == pytest.approx((3.72, 0.491950, 1.05))
    assert any("one scale" in n for n in out.notes)


def test_a_wrong_citation_is_re_pointed_to_the_passage_that_holds_the_values() -> None:
    text = _output(["第一产业", "第二产业", "第三产业"], ("增加值", ["1376.4亿元", "10373.4亿元", "11903.4亿元"], 1))
    out = spec_from_output(text, "用饼图展示三大产业增加值", ["无关的资料。", SECTORS])
    assert out.spec is not None and out.spec.type == "pie" and out.spec.series[0].passages == (2,)
    assert any("re-pointed" in n for n in out.notes)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("I cannot draw that.", "no JSON"),
        ('{"title": "x"}', "no categories"),
        (_output(["2021", "2020"], ("Revenue", ["812.4"], 1)), "1 values for 2 categories"),
        (_output(["2021", "2020"], ("Revenue", ["812.4", "3.4%"], 1)), "mixes percentages"),
    ],
)
def test_unusable_outputs_give_no_spec_and_say_why(text: str, error: str) -> None:
    out = spec_from_output(text, "Chart revenue", [TABLE + "\nGrowth | 3.4% | 2.1% | 1.0%"])
    assert out.spec is None and any(error in e for e in out.errors), out.errors


def test_series_of_different_units_keep_the_first_units_series() -> None:
    text = _output(["2021", "2020"], ("Revenue", ["812.4", "760.9"], 1), ("Growth", ["6.8%", "8.4%"], 2))
    out = spec_from_output(text, "Chart revenue", [TABLE, "Growth was 6.8% in 2021 and 8.4% in 2020."])
    assert out.spec is not None and [s.name for s in out.spec.series] == ["Revenue"]
    assert any("Growth" in e and "unit" in e for e in out.errors)


# ---------------------------------------------------------------------------------------------
# The step
# ---------------------------------------------------------------------------------------------


def _passages(*texts: str) -> list[Passage]:
    return [Passage(f"p{i}", t, 0.9, f"d{i}", "Report", "src", 1, "local") for i, t in enumerate(texts, 1)]


GOOD = _output(["2021", "2020", "2019"], ("Revenue", ["812.4", "760.9", "702.15"], 1))


async def test_a_clean_first_output_costs_one_call() -> None:
    gen = ScriptedGenerator([GOOD])
    out = await chart_spec(gen, "Chart revenue", _passages(TABLE), "en", [Example("q", "a")])
    assert out.spec is not None and not out.repaired and out.attempts == 1
    assert [(c.task, c.instruction, c.examples) for c in gen.calls] == [("chart", "", [Example("q", "a")])]


async def test_no_chart_gets_one_repair_call_naming_the_problem() -> None:
    bad = _output(["2021", "2020"], ("Revenue", ["812.4"], 1))
    gen = ScriptedGenerator([bad, GOOD])
    out = await chart_spec(gen, "Chart revenue", _passages(TABLE), "en")
    assert out.spec is not None and out.repaired and out.attempts == 2
    assert "1 values for 2 categories" in gen.calls[1].instruction and bad in gen.calls[1].instruction


async def test_a_worse_repair_is_not_taken() -> None:
    partial = _output(["2021", "2020", "2019"], ("Revenue", ["812.4", "760.9", "999"], 1))  # one value dropped
    gen = ScriptedGenerator([partial, "no idea"])
    out = await chart_spec(gen, "Chart revenue", _passages(TABLE), "en")
    assert out.spec is not None and out.spec.categories == ("2020", "2021") and not out.repaired
    assert out.attempts == 2 and "999" in gen.calls[1].instruction


async def test_no_chart_after_the_repair_is_no_chart() -> None:
    gen = ScriptedGenerator(["nothing", "still nothing"])
    out = await chart_spec(gen, "Chart revenue", _passages(TABLE), "en")
    assert out.spec is None and not out.repaired and out.attempts == 2 and out.errors


# ---------------------------------------------------------------------------------------------
# The few-shot bank (analysis.jsonl holds chart-data examples)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", shipped_rows("analysis"), ids=lambda r: r["question"][4:40])
def test_every_bank_answer_is_a_clean_chart(row: dict) -> None:
    passages = re.findall(r"<passage [^>]*>\n(.*?)\n</passage>", row["question"], re.DOTALL)
    request = row["question"].partition("</information>")[2].strip()
    assert passages and request
    out = spec_from_output(row["answer"], request, passages)
    assert out.spec is not None and out.errors == (), out.errors
    answer = json.loads(row["answer"])
    assert set(answer) == {"title", "categories", "series"}  # the shape the chart prompt asks for
    assert all(set(s) == {"name", "values", "passage"} for s in answer["series"])
