"""JSON extraction: requested keys read from the question, outputs validated against keys and passages,
one repair call, and the few-shot bank's examples passing the same validation."""

from __future__ import annotations

import json
import re

import pytest
from fixtures.task_generator import ScriptedGenerator
from shipped_banks import shipped_rows
from weaverbird_orchestrator.domain import Example, Passage
from weaverbird_orchestrator.tasks.extraction import (
    entry_shape,
    extract_json,
    first_json_object,
    keys_from_question,
    shape_instruction,
    stated_with,
    unsupported_figures,
    validate_json,
)

REPORT = "Quillmore Paper reported revenue of $412.6 million and net income of $38.15 million for 2023."
HOLDINGS = (
    "Top holdings of the Larchfield Value Fund: Brennick Steel 7.42% of net assets, "
    "Ostrava Rail 5.19%, Pinecrest Foods 3.6%."
)
TABLE = "Segment | 2023 | 2022\nPaper | 301.2 | 287.4\nPackaging | 111.4 | 96.8"


# ---------------------------------------------------------------------------------------------
# Keys from the question
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "keys"),
    [
        ("Extract the fund's holdings as {stock name: NAV share %}", ["stock name: NAV share %"]),
        ("以{股票名称: 占净值比例}的格式提取基金持仓", ["股票名称: 占净值比例"]),
        ("以｛股票名称：占净值比例｝的格式", ["股票名称: 占净值比例"]),
        ("Give it as JSON with keys revenue, net income", ["revenue", "net income"]),
        ('Extract as JSON with the keys "revenue" and "net income".', ["revenue", "net income"]),
        ("Return JSON. fields: ticker, price", ["ticker", "price"]),
        ("JSON with the following fields: Revenue, Net income", ["Revenue", "Net income"]),
        ("请以JSON格式提取，字段为营业收入、净利润和基本每股收益。", ["营业收入", "净利润", "基本每股收益"]),
        ("提取业绩，键包括：营业收入、净利润", ["营业收入", "净利润"]),
        ('Return {"revenue": number, "eps": number}', ["revenue", "eps"]),
        ("Return {revenue, net income}", ["revenue", "net income"]),
        ("with keys revenue, net income and EPS", ["revenue", "net income", "EPS"]),
        ('with keys "cost", "selling, general and administrative"', ["cost", "selling, general and administrative"]),
        ("字段为“营业收入”、“归母净利润”", ["营业收入", "归母净利润"]),
    ],
)
def test_keys_from_question(question: str, keys: list[str]) -> None:
    assert keys_from_question(question) == keys


@pytest.mark.parametrize(
    "question", ["Extract the revenue", "Extract key figures as JSON", "列出关键指标", "What keys does the vault use?"]
)
def test_no_keys_when_the_question_names_none(question: str) -> None:
    assert keys_from_question(question) == []


def test_entry_shape_only_for_a_single_mapping_key() -> None:
    assert entry_shape(["stock name: NAV share %"]) == ("stock name", "NAV share %")
    assert entry_shape(["股票名称：占净值比例"]) == ("股票名称", "占净值比例")
    assert entry_shape(["revenue", "net income"]) is None
    assert entry_shape(["revenue"]) is None


def test_shape_instruction_lists_keys_or_the_entry_shape() -> None:
    assert shape_instruction(["revenue", "net income"], "en") == (
        'Keys: "revenue", "net income". Output: {"revenue": ..., "net income": ...}'
    )
    assert '"<stock name>": "<NAV share %>"' in shape_instruction(["stock name: NAV share %"], "en")
    assert "键" in shape_instruction(["营业收入"], "zh")
    assert not re.search(r"\d", shape_instruction(["stock name: NAV share %"], "zh"))


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def test_first_json_object_tolerates_fences_prose_and_trailing_commas_and_says_so() -> None:
    fenced = first_json_object('Here it is:\n```json\n{"a": 1,}\n```\nDone.')
    assert fenced.value == {"a": 1}
    assert any("code fence" in n for n in fenced.notes) and any("trailing commas" in n for n in fenced.notes)
    prose = first_json_object('Sure! {"a": "x"} hope that helps')
    assert prose.value == {"a": "x"} and any("text around" in n for n in prose.notes)
    assert first_json_object('{"a": 2}').notes == ()
    assert first_json_object("no json [1, 2]").value is None
    assert first_json_object('{"a": 1').value is None


# ---------------------------------------------------------------------------------------------
# Validation: records
# ---------------------------------------------------------------------------------------------

KEYS = ["revenue", "net income"]


def test_a_valid_record_keeps_keys_as_requested() -> None:
    out = validate_json('{"Revenue": "$412.6 million", "net_income": 38.15}', KEYS, [REPORT])
    assert out.valid and out.errors == () and out.missing_keys == ()
    assert out.value == {"revenue": "$412.6 million", "net income": 38.15}
    assert json.loads(out.json) == out.value


def test_missing_key_is_invalid_and_listed() -> None:
    out = validate_json('{"revenue": "$412.6 million"}', KEYS, [REPORT])
    assert not out.valid and out.missing_keys == ("net income",)
    assert any("net income" in e for e in out.errors)


def test_unrequested_keys_are_dropped_and_reported() -> None:
    out = validate_json('{"revenue": "$412.6 million", "net income": "$38.15 million", "year": 2023}', KEYS, [REPORT])
    assert out.valid and "year" not in out.value
    assert any('"year"' in n for n in out.notes)


def test_a_figure_in_no_passage_makes_it_invalid() -> None:
    out = validate_json('{"revenue": "$412.6 million", "net income": "$39.2 million"}', KEYS, [REPORT])
    assert not out.valid
    assert any("39.2" in e and "net income" in e for e in out.errors)


def test_a_neighbours_figure_is_caught() -> None:
    # 412.6 is in the passage, but stated for revenue, not for net income.
    out = validate_json('{"revenue": "$412.6 million", "net income": "$412.6 million"}', KEYS, [REPORT])
    assert not out.valid and any("net income" in e and "do not state" in e for e in out.errors)


def test_null_is_an_honest_absence_not_an_error() -> None:
    out = validate_json('{"revenue": "$412.6 million", "net income": null}', KEYS, [REPORT])
    assert out.valid and out.null_keys == ("net income",)


def test_no_json_at_all() -> None:
    out = validate_json("I cannot find that.", KEYS, [REPORT])
    assert not out.valid and out.value is None and out.json == "" and out.missing_keys == tuple(KEYS)


def test_year_like_values_are_checked_as_figures() -> None:
    passage = ["Lead closed at 2100 USD per tonne in 2023."]
    assert unsupported_figures("2100", passage) == []
    assert unsupported_figures(2100, passage) == []
    assert unsupported_figures("2099", passage) == ["2099"]
    assert unsupported_figures(2099.0, passage) == ["2099"]


def test_scaled_and_formatted_numbers_match_the_passage() -> None:
    passage = ["营业收入12.8亿元，净利润4919.50万元。"]
    assert unsupported_figures(1280000000, passage) == []
    assert unsupported_figures("4,919.5万元", passage) == []
    assert unsupported_figures(12.9, passage) == ["12.9"]


# ---------------------------------------------------------------------------------------------
# Validation: mappings
# ---------------------------------------------------------------------------------------------

MAPPING = ["stock name: NAV share %"]


def test_a_valid_mapping() -> None:
    out = validate_json(
        '{"Brennick Steel": "7.42%", "Ostrava Rail": "5.19%", "Pinecrest Foods": 3.6}', MAPPING, [HOLDINGS]
    )
    assert out.valid, out.errors
    assert out.value["Pinecrest Foods"] == 3.6


def test_an_invented_entry_name_is_invalid() -> None:
    out = validate_json('{"Brennick Steel": "7.42%", "Galloway Mines": "5.19%"}', MAPPING, [HOLDINGS])
    assert not out.valid and any("Galloway Mines" in e for e in out.errors)


def test_an_entry_with_another_entrys_value_is_invalid() -> None:
    out = validate_json('{"Brennick Steel": "5.19%", "Ostrava Rail": "5.19%"}', MAPPING, [HOLDINGS])
    assert not out.valid and [e for e in out.errors if "do not state" in e] == [
        '"Brennick Steel": the passages do not state 5.19% for it'
    ]


def test_values_before_their_labels_and_respectively_lists_are_read_too() -> None:
    before = "Orrin sold 41.2 million litres in the North and 18.75 million litres in the South."
    assert validate_json('{"North": "41.2 million", "South": "18.75 million"}', ["region: volume"], [before]).valid
    assert not validate_json('{"North": "18.75 million", "South": "41.2 million"}', ["region: volume"], [before]).valid
    respectively = "港股通方面，美团-W、中芯国际分别获净买入3.59亿港元、3.1亿港元。"
    assert validate_json('{"美团-W": "3.59亿港元", "中芯国际": "3.1亿港元"}', ["股票: 金额"], [respectively]).valid


def test_table_rows_and_columns_ground_a_mapping() -> None:
    assert validate_json('{"Paper": "301.2", "Packaging": "111.4"}', ["segment: 2023 revenue"], [TABLE]).valid
    # 96.8 is Packaging's value, not Paper's.
    assert not validate_json('{"Paper": "96.8"}', ["segment: 2023 revenue"], [TABLE]).valid


def test_stated_with_reads_table_columns_and_ignores_unnamed_labels() -> None:
    assert stated_with("2022", "287.4", [TABLE]) is True  # the column "2022" heads
    assert stated_with("2022", "301.2", [TABLE]) is False  # a 2023 figure
    assert stated_with("operating margin", "301.2", [TABLE]) is None  # the passages never name it
    assert stated_with("Paper", "n/a", [TABLE]) is None  # no figure to check


def test_null_like_strings_are_nulls_and_a_mapping_of_only_those_is_invalid() -> None:
    record = validate_json('{"revenue": "$412.6 million", "net income": "N/A"}', KEYS, [REPORT])
    assert record.valid and record.value["net income"] is None and record.null_keys == ("net income",)
    # Names copied from the passages with no value say nothing: they are dropped, and nothing is left.
    hollow = validate_json('{"Brennick Steel": "null", "Ostrava Rail": "无"}', MAPPING, [HOLDINGS])
    assert not hollow.valid and hollow.value == {} and any("no entries" in e for e in hollow.errors)
    partial = validate_json('{"Brennick Steel": "7.42%", "Ostrava Rail": null}', MAPPING, [HOLDINGS])
    assert partial.valid and partial.value == {"Brennick Steel": "7.42%"}
    assert any("Ostrava Rail" in n for n in partial.notes)


def test_a_wrapped_mapping_is_unwrapped_and_an_empty_or_nested_one_is_not_valid() -> None:
    wrapped = validate_json('{"holdings": {"Brennick Steel": "7.42%"}}', MAPPING, [HOLDINGS])
    assert wrapped.valid and wrapped.value == {"Brennick Steel": "7.42%"} and wrapped.notes
    assert not validate_json("{}", MAPPING, [HOLDINGS]).valid
    nested = validate_json('{"Brennick Steel": {"share": "7.42%"}}', MAPPING, [HOLDINGS])
    assert not nested.valid and any("nested" in e for e in nested.errors)


# ---------------------------------------------------------------------------------------------
# The step: one call, one repair
# ---------------------------------------------------------------------------------------------


def _passages(*texts: str) -> list[Passage]:
    return [Passage(f"p{i}", t, 0.9, f"d{i}", "Report", "src", 1, "local") for i, t in enumerate(texts, 1)]


async def test_valid_first_output_costs_one_call() -> None:
    gen = ScriptedGenerator(['{"revenue": "$412.6 million", "net income": "$38.15 million"}'])
    examples = [Example("q", "{}")]
    out = await extract_json(gen, "Extract revenue and net income", _passages(REPORT), "en", KEYS, examples)
    assert out.valid and not out.repaired and out.attempts == 1
    assert len(gen.calls) == 1 and gen.calls[0].task == "json"
    assert gen.calls[0].instruction == shape_instruction(KEYS, "en")
    assert gen.calls[0].examples == examples


async def test_an_invalid_output_is_repaired_once_with_its_errors() -> None:
    gen = ScriptedGenerator(
        ['{"revenue": "$412.6 million"}', '{"revenue": "$412.6 million", "net income": "$38.15 million"}']
    )
    out = await extract_json(gen, "Extract revenue and net income", _passages(REPORT), "en", KEYS)
    assert out.valid and out.repaired and out.attempts == 2
    repair = gen.calls[1].instruction
    assert gen.calls[1].task == "json"
    assert 'missing key "net income"' in repair and '{"revenue": "$412.6 million"}' in repair


async def test_still_invalid_after_the_repair_is_reported_not_returned_as_valid() -> None:
    gen = ScriptedGenerator(['{"revenue": "$999 million", "net income": null}', "no idea"])
    out = await extract_json(gen, "Extract revenue and net income", _passages(REPORT), "en", KEYS)
    assert not out.valid and not out.repaired and out.attempts == 2 and len(gen.calls) == 2
    # The parsed first attempt has fewer problems than the unparseable second: it is the one reported.
    assert out.value == {"revenue": "$999 million", "net income": None}
    assert any("999" in e for e in out.errors)


# ---------------------------------------------------------------------------------------------
# The few-shot bank
# ---------------------------------------------------------------------------------------------


def _split(question: str) -> tuple[list[str], str]:
    """An example's passages and its request: the example holds the user turn the step sends."""
    passages = re.findall(r"<passage [^>]*>\n(.*?)\n</passage>", question, re.DOTALL)
    return passages, question.partition("</information>")[2].strip()


@pytest.mark.parametrize("row", shipped_rows("extraction"), ids=lambda r: r["question"][4:40])
def test_every_bank_answer_passes_the_validator_it_teaches(row: dict) -> None:
    passages, request = _split(row["question"])
    keys = keys_from_question(request)
    assert passages and keys
    assert shape_instruction(keys, row["language"]) in request  # the instruction line the step sends
    out = validate_json(row["answer"], keys, passages)
    assert out.valid and out.notes == (), (out.errors, out.notes)
    assert row["answer"] == json.dumps(json.loads(row["answer"]), ensure_ascii=False)  # bare JSON, no fence
