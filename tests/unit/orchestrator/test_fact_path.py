"""A fact answer carries its calculation (formula, figures cited to their page, result) in the done event,
so the page and the CLI show how a computed answer was reached. Statements written for the test."""

from __future__ import annotations

from collections.abc import Sequence

from weaverbird_common.facts.model import Fact, Period
from weaverbird_orchestrator import fact_path
from weaverbird_orchestrator.domain import Retrieval, Route, RouteDecision
from weaverbird_orchestrator.events import DoneEvent


def _fact(concept: str, label: str, year: int, value: float, page: int, months: int = 12) -> Fact:
    return Fact(
        document_id="doc-1",
        company="KESTREL_LOOM",
        page=page,
        table="Consolidated statements",
        statement="income" if months else "balance",
        label=label,
        concept=concept,
        period=Period(year, months),
        value=value,
        scale=1e6,
        currency="USD",
        title="Kestrel Loom Annual Report 2025",
        source="https://example.com/kestrel-2025.pdf",
    )


FACTS = [
    _fact("revenue", "Net sales", 2025, 1482.6, 40),
    _fact("gross_profit", "Gross profit", 2025, 571.2, 40),
    _fact("total_current_assets", "Total current assets", 2025, 640.0, 41, months=0),
    _fact("total_current_liabilities", "Total current liabilities", 2025, 400.0, 41, months=0),
]


async def _lookup(company: str, concepts: Sequence[str], years: Sequence[int]) -> list[Fact]:
    return [f for f in FACTS if f.concept in concepts and f.period.fiscal_year in years]


async def test_a_metric_answer_shows_its_formula_and_each_figure_with_its_page() -> None:
    reply = await fact_path.answer_from_kb(
        "What was Kestrel Loom's gross margin in FY2025?", "KESTREL_LOOM", "en", _lookup
    )
    assert reply is not None
    calc = fact_path.calculation(reply)
    assert calc.formula.startswith("Gross margin = gross profit / revenue; = 571.2 / 1,482.6")
    assert calc.unit == "%"
    assert round(calc.result or 0, 1) == 38.5
    assert [(f.label, f.passage, f.unit) for f in calc.figures] == [
        ("Gross profit (FY2025)", 1, "USD million"),
        ("Net sales (FY2025)", 1, "USD million"),
    ]
    assert reply.passages[0].page == 40  # [1] is the statement's page


async def test_a_ratio_cites_each_page_and_a_plain_figure_has_no_formula() -> None:
    reply = await fact_path.answer_from_kb("Kestrel Loom current ratio FY2025?", "KESTREL_LOOM", "en", _lookup)
    assert reply is not None
    calc = fact_path.calculation(reply)
    assert [f.passage for f in calc.figures] == [1, 1]
    assert reply.passages[0].page == 41
    assert calc.unit == "" and round(calc.result or 0, 2) == 1.6
    figure = await fact_path.answer_from_kb("Kestrel Loom net sales in FY2025?", "KESTREL_LOOM", "en", _lookup)
    assert figure is not None
    plain = fact_path.calculation(figure)
    assert plain.formula == ""
    assert (plain.result, plain.unit) == (1482.6, "USD million")


def _retrieval() -> Retrieval:
    return Retrieval(RouteDecision(Route.LOCAL, 0.5, 0.1, 5, 3, "not_needed", "", {}), [])


async def test_the_done_event_carries_the_calculation() -> None:
    reply = await fact_path.answer_from_kb(
        "What was Kestrel Loom's gross margin in FY2025?", "KESTREL_LOOM", "en", _lookup
    )
    assert reply is not None
    events = [e async for e in fact_path.reply_events(reply, _retrieval(), "conv-1", "lookup", lambda: 1.0)]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.extras.calculation is not None
    assert done.extras.calculation.figures[0].label == "Gross profit (FY2025)"
