"""`weaverbird kb facts` rows: page, period label, row label with its concept, value as printed with its unit."""

from __future__ import annotations

from weaverbird_cli.__main__ import main
from weaverbird_cli.facts_view import fact_line, figure, unit_text
from weaverbird_common.facts.model import Fact, Period

YEAR_2024 = Period(2024)


def _fact(value: float, *, page: int | None = 4, period: Period = YEAR_2024, **kw: object) -> Fact:
    fields: dict[str, object] = {"scale": 1e6, "unit": "currency", "currency": "USD", **kw}
    return Fact("doc", "ACME", page, "Income statement", "income", "Revenue", "revenue", period, value, **fields)  # type: ignore[arg-type]


def test_figures_read_as_printed() -> None:
    assert [figure(v) for v in (1102.9, 11692713.0, -12.5, 0.0, 0.125)] == [
        "1,102.9",
        "11,692,713",
        "-12.5",
        "0",
        "0.125",
    ]


def test_units_name_currency_scale_and_kind() -> None:
    assert unit_text(_fact(1.0)) == "USD million"
    assert unit_text(_fact(1.0, scale=1e4, currency="CNY")) == "CNY 万"
    assert unit_text(_fact(1.0, scale=1.0, unit="per_share")) == "USD per share"
    assert unit_text(_fact(21.4, scale=1.0, unit="percent")) == "%"
    assert unit_text(_fact(1.0, scale=1e3, unit="shares", currency="")) == "thousand shares"
    assert unit_text(_fact(1.0, scale=1e5, currency="")) == "x100000"


def test_a_line_shows_page_period_label_concept_and_value() -> None:
    assert fact_line(_fact(1102.9)) == "p.4    FY2024               Revenue [revenue]  1,102.9 USD million"
    quarter = fact_line(_fact(-0.5, page=None, period=Period(2024, 3, 2), scale=1.0, unit="per_share"))
    assert quarter.startswith("p.-    Q2 2024 ") and quarter.endswith("-0.5 USD per share")
    balance = fact_line(_fact(5321.0, period=Period(2024, 0, 0, "2024-12-31"), scale=1e4, currency="CNY"))
    assert "as of 2024-12-31" in balance and balance.endswith("5,321 CNY 万")


def test_kb_facts_reports_an_unreachable_retriever(capsys: object) -> None:
    # Port 9 (discard) has no gRPC server on 127.0.0.1: the command says which retriever it tried.
    assert main(["kb", "facts", "doc-1", "--addr", "127.0.0.1:9"]) == 1
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "error: UNAVAILABLE" in err and "retriever at 127.0.0.1:9" in err
