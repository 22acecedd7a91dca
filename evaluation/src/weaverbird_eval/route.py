"""`weaverbird eval route`: does the gate keep answerable questions local and send out-of-KB ones away?

Every question is asked twice against the served retrieval (hybrid search, catalog filters):
- answerable: the whole corpus is the knowledge base;
- out-of-KB: its own document is left out (leave-one-filing-out for FinanceBench, the question's own
  context for TAT-QA and Fin-Eva), from the search, from the catalog and from the name look-ups.
Gate designs compared: the cosine alone (web when the best cosine < c), the catalog coverage alone
(weaverbird_common.coverage: a KB company's missing fiscal year or quarter, a company the catalog does
not know, a name no chunk mentions; and, for comparison, the same without quarters, with the annual
report counting for Q4, and without the unknown-company rule), and both.
c is chosen on the held-out half (the best balanced accuracy) and every share is reported on the dev
half, so no setting is judged on the questions that chose it.

A third kind of question checks the other direction of the period rule: "year Y answered from the Y+1
filing". A question about a KB company's year Y, whose company has the Y filing but no Y-1 one, is asked
about Y-1 instead (the year rewritten in its text): the Y filing's comparative column answers it, so it
should stay local. Its cosine is the original question's (one year digit apart); the gate designs judge it
by the catalog, and the served rule asks the lexical index whether the Y filing writes Y-1.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
from weaverbird_common.coverage import MIN_TERM_COVERAGE, Coverage, assess, names_to_look_up, unknown_companies
from weaverbird_common.dates import latest_date, parse_iso
from weaverbird_common.doc_kinds import asked_kinds
from weaverbird_common.questions import alias_map, filters_from_question, search_filters
from weaverbird_common.zh_names import LOOKUP_HITS, chinese_names, holds_name
from weaverbird_retriever.lexical import encoder, term_coverage
from weaverbird_retriever.stores.base import SearchOptions

from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import EvalSet, is_held_out
from weaverbird_eval.systems import DenseSystem

TOP_K = 5  # passages the orchestrator keeps per search by default


@dataclass
class Case:
    query_id: str
    out_of_kb: bool
    best_cosine: float
    # Catalog coverage as served: a document for year Y (quarter Q) covers Y (Q), and so does the next
    # year's filing when it writes Y (its comparative column).
    covered: bool
    reason: str
    held_out: bool
    covered_next_year: bool = True  # the same with a filing for year Y+1 counting too (its comparatives)
    covered_by_names: bool = True  # as served before unknown_companies: only names no chunk mentions count
    covered_years_only: bool = True  # as served before quarters were checked
    covered_quarter_q4: bool = True  # as served, with the year's annual report counting for Q4
    covered_without_zh_names: bool = True  # as served before Chinese names were looked up
    covered_without_terms: bool = True  # as served before the term-coverage rule
    covered_without_dates: bool = True  # as served before a date after the company's newest document counted
    term_coverage: float = 1.0  # the best share of the question's terms one of its first K passages holds
    names_company: bool = False  # the question names a catalog company (the term rule does not apply)
    comparative: bool = False  # answerable only from the next year's filing (its comparative column)


@dataclass
class GateRow:
    dataset: str
    design: str
    threshold: float | None
    answerable_local: float  # share of answerable questions kept local (dev half)
    out_of_kb_web: float  # share of out-of-KB questions sent to the web or refused (dev half)
    questions: int


@dataclass
class RouteReport:
    dataset: str
    backend: str
    rows: list[GateRow] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)


def _texts(hits: Sequence[Any]) -> list[str]:
    return [f"{h.payload.get('title', '')}\n{h.text}" for h in hits]


def _group(unit_id: str) -> str:
    """The document a unit belongs to: the part before '#' (a filing, a TAT-QA report, a Fin-Eva context)."""
    return unit_id.split("#", 1)[0]


class _Catalog:
    """Companies, aliases and years per company from chunk metadata, with one document left out."""

    def __init__(self, metadata: Sequence[Mapping[str, Any]], groups: Sequence[str]) -> None:
        self._by_group: dict[str, tuple[str, frozenset[str], int, int]] = {}
        self._dates: dict[str, str] = {}
        self._kinds: dict[str, str] = {}
        for meta, group in zip(metadata, groups, strict=True):
            if meta.get("company"):
                self._by_group[group] = (
                    meta["company"],
                    frozenset(meta.get("aliases") or ()),
                    int(meta.get("year") or 0),
                    int(meta.get("quarter") or 0),
                )
                self._dates[group] = str(meta.get("published_date") or "")
                self._kinds[group] = str(meta.get("doc_type") or "")

    def latest(self, left_out: str | None) -> dict[str, str]:
        """Each company's newest document date with `left_out` left out, as the retriever's catalog
        reports it: only for companies whose every document is dated."""
        dates: dict[str, list[date | None]] = defaultdict(list)
        for group, (company, *_) in self._by_group.items():
            if group != left_out:
                dates[company].append(parse_iso(self._dates[group]))
        latest = {}
        for company, found in dates.items():
            known = [d for d in found if d]
            if known and len(known) == len(found):
                latest[company] = max(known).isoformat()
        return latest

    def kinds(self, left_out: str | None) -> dict[str, list[str]]:
        """Each company's document kinds with `left_out` left out, as the orchestrator reads the catalog:
        only for companies whose every document is of a known kind."""
        kinds: dict[str, list[str]] = defaultdict(list)
        for group, (company, *_) in self._by_group.items():
            if group != left_out:
                kinds[company].append(self._kinds[group])
        return {c: sorted(set(found)) for c, found in kinds.items() if all(found)}

    def without(
        self, left_out: str | None
    ) -> tuple[dict[str, list[str]], dict[str, list[int]], dict[str, list[tuple[int, int]]]]:
        """Aliases, years and (year, quarter) of quarterly documents per company, `left_out` left out."""
        aliases: dict[str, set[str]] = defaultdict(set)
        years: dict[str, set[int]] = defaultdict(set)
        quarters: dict[str, set[tuple[int, int]]] = defaultdict(set)
        for group, (company, names, year, quarter) in self._by_group.items():
            if group != left_out:
                aliases[company] |= names
                years[company].add(year)
                if year and quarter:
                    quarters[company].add((year, quarter))
        return (
            {c: sorted(a) for c, a in aliases.items()},
            {c: sorted(y) for c, y in years.items()},
            {c: sorted(q) for c, q in quarters.items()},
        )


def _without(arguments: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k not in names}


def _year_earlier(text: str, year: int) -> str:
    """The question with `year` written one year earlier (FY2023 -> FY2022, 2023 -> 2022)."""
    return re.sub(rf"(?<!\d){year}(?!\d)", str(year - 1), text)


def _with_comparative(
    verdict: Any, found: Mapping[str, Any], years: Mapping[str, Sequence[int]], store: Any, vector: Any, exclude: Any
) -> Any:
    """The verdict as served: a "period" gap is covered when the company's filing for the next year (still
    in the KB) writes the year (QuestionFlow._comparative_mention)."""
    company, year = str(found.get("company") or ""), found.get("year")
    if verdict.gap != "period" or not isinstance(year, int) or year + 1 not in years.get(company, ()):
        return verdict
    look = SearchOptions(mode="lexical", text=str(year), exclude=exclude)
    if store.search(vector, 1, {"company": company, "year": year + 1}, look):
        return Coverage(True)
    return verdict


def _comparative_case(query: Any, vector: Any, store: Any, catalog: _Catalog, best: float) -> Case | None:
    """The question asked about the year before its own filing's, when the company has no filing for that
    year: answerable from the comparative column (module docstring). None when the question does not fit."""
    companies, years, quarters = catalog.without(None)
    aliases = alias_map(companies)
    found = filters_from_question(query.text, list(companies), aliases=aliases)
    company, year = str(found.get("company") or ""), found.get("year")
    if not company or not isinstance(year, int) or year not in years.get(company, ()) or year - 1 in years[company]:
        return None
    earlier = _year_earlier(query.text, year)
    asked = filters_from_question(earlier, list(companies), aliases=aliases)
    if asked.get("year") != year - 1:
        return None
    lenient = assess(asked, years, [], next_year=True, company_quarters=quarters)
    verdict = assess(asked, years, [], company_quarters=quarters)
    covered = _with_comparative(verdict, asked, years, store, vector, {}).covered
    return Case(
        query.id,
        False,
        best,
        covered,
        verdict.reason,
        is_held_out(query.id),
        covered_next_year=lenient.covered,
        covered_by_names=verdict.covered,
        covered_years_only=verdict.covered,
        covered_quarter_q4=verdict.covered,
        covered_without_zh_names=verdict.covered,
        covered_without_terms=covered,
        covered_without_dates=covered,
        names_company=True,
        comparative=True,
    )


def route_cases(evalset: EvalSet, backend: str) -> list[Case]:
    chunks = chunk_units(evalset)
    groups = [_group(u) for u in chunks.unit_ids]
    metadata = [{**m, "group": g} for m, g in zip(chunks.metadata, groups, strict=True)]
    system = DenseSystem(backend, filters=True, mode="hybrid")
    catalog = _Catalog(chunks.metadata, groups)
    cases: list[Case] = []
    try:
        system.index(chunks.texts, evalset.language, evalset.corpus_label, metadata)
        store = system._store
        assert store is not None
        vectors = system.embed_queries([q.text for q in evalset.queries])
        lexical = encoder()
        for query, vector in zip(evalset.queries, vectors, strict=True):
            own = _group(next(iter(sorted(query.relevant))))
            asked = lexical.terms(query.text)
            for out_of_kb in (False, True):
                exclude = {"group": own} if out_of_kb else {}
                companies, years, quarters = catalog.without(own if out_of_kb else None)
                newest = catalog.latest(own if out_of_kb else None)
                found = filters_from_question(query.text, list(companies), aliases=alias_map(companies))
                options = SearchOptions(mode="hybrid", text=query.text, exclude=exclude)
                hits = store.search(vector, TOP_K, None, options)
                # The served gate reads the first K passages of the question's own search, which is this one
                # whenever the rule applies (no company named, so nothing narrows the search).
                terms = max((term_coverage(asked, lexical.terms(t)) for t in _texts(hits)), default=0.0)
                if narrowing := search_filters(found):  # the orchestrator searches with them first
                    hits += store.search(vector, TOP_K, narrowing, options)
                unknown, missing = [], []
                if "company" not in found and evalset.language == "en":
                    names = [*companies, *alias_map(companies)]
                    missing = unknown_companies(query.text, names)
                    for name in names_to_look_up(query.text, names, 4):
                        look = SearchOptions(mode="lexical", text=name, exclude=exclude)
                        if not store.search(vector, 1, None, look):
                            unknown.append(name)
                zh_unknown = []
                if "company" not in found and evalset.language == "zh":
                    searched = _texts(hits)
                    for name in chinese_names(query.text)[:4]:  # as QuestionFlow._coverage_gap
                        look = SearchOptions(mode="lexical", text=name, exclude=exclude)
                        if not (
                            holds_name(searched, name)
                            or holds_name(_texts(store.search(vector, LOOKUP_HITS, None, look)), name)
                        ):
                            zh_unknown.append(name)
                before_zh = _with_comparative(
                    assess(found, years, unknown, missing_companies=missing, company_quarters=quarters),
                    found,
                    years,
                    store,
                    vector,
                    exclude,
                )
                unknown += zh_unknown
                # The served gate's arguments; each "without" design drops one rule's pair.
                served: dict[str, Any] = {
                    "missing_companies": missing,
                    "company_quarters": quarters,
                    "term_coverage": terms,
                    "min_term_coverage": MIN_TERM_COVERAGE,
                    "asked_date": latest_date(query.text),
                    "latest_dates": newest,
                    "asked_kinds": asked_kinds(query.text),
                    "company_kinds": catalog.kinds(own if out_of_kb else None),
                }
                verdict = _with_comparative(
                    assess(found, years, unknown, **served), found, years, store, vector, exclude
                )
                without_terms = _with_comparative(
                    assess(found, years, unknown, **_without(served, "term_coverage", "min_term_coverage")),
                    found,
                    years,
                    store,
                    vector,
                    exclude,
                )
                without_dates = _with_comparative(
                    assess(found, years, unknown, **_without(served, "asked_date", "latest_dates")),
                    found,
                    years,
                    store,
                    vector,
                    exclude,
                )
                lenient = assess(found, years, unknown, next_year=True, missing_companies=missing)
                by_names = assess(found, years, unknown)
                years_only = assess(found, years, unknown, missing_companies=missing)
                q4 = assess(found, years, unknown, missing_companies=missing, company_quarters=quarters, annual_q4=True)
                best = max((h.score for h in hits), default=-1.0)
                held_out = is_held_out(query.id)
                cases.append(
                    Case(
                        query.id,
                        out_of_kb,
                        best,
                        verdict.covered,
                        verdict.reason,
                        held_out,
                        covered_next_year=lenient.covered,
                        covered_by_names=by_names.covered,
                        covered_years_only=years_only.covered,
                        covered_quarter_q4=q4.covered,
                        covered_without_zh_names=before_zh.covered,
                        covered_without_terms=without_terms.covered,
                        covered_without_dates=without_dates.covered,
                        term_coverage=terms,
                        names_company="company" in found,
                    )
                )
            if comparative := _comparative_case(query, vector, store, catalog, cases[-2].best_cosine):
                cases.append(comparative)
    finally:
        system.close()
    return cases


def _shares(cases: Sequence[Case], web: Any) -> tuple[float, float, int]:
    """(answerable kept local, out-of-KB sent away, answerable questions); comparative cases apart."""
    cases = [c for c in cases if not c.comparative]
    answerable = [c for c in cases if not c.out_of_kb]
    missing = [c for c in cases if c.out_of_kb]
    local = float(np.mean([not web(c) for c in answerable])) if answerable else 0.0
    away = float(np.mean([web(c) for c in missing])) if missing else 0.0
    return local, away, len(answerable)


def _best_threshold(cases: Sequence[Case], with_coverage: bool) -> float:
    """The c of the best balanced accuracy on these cases (ties: the lower c, fewer web trips)."""
    candidates = sorted({round(c.best_cosine, 4) for c in cases})
    best_c, best_acc = -1.0, -1.0
    for c in candidates:
        local, away, _ = _shares(cases, lambda x, c=c: x.best_cosine < c or (with_coverage and not x.covered))
        if (local + away) / 2 > best_acc + 1e-9:
            best_c, best_acc = c, (local + away) / 2
    return best_c


def evaluate(evalset: EvalSet, backend: str, default_c: float) -> RouteReport:
    cases = route_cases(evalset, backend)
    tune = [c for c in cases if c.held_out]
    report = [c for c in cases if not c.held_out]
    rows = []
    designs: list[tuple[str, float | None, Any]] = [
        ("coverage", None, lambda x: not x.covered),
        ("coverage, annual report counts for Q4", None, lambda x: not x.covered_quarter_q4),
        ("coverage without quarters", None, lambda x: not x.covered_years_only),
        ("coverage, next year's filing counts", None, lambda x: not x.covered_next_year),
        ("coverage without unknown companies", None, lambda x: not x.covered_by_names),
        ("coverage without term coverage", None, lambda x: not x.covered_without_terms),
        ("coverage without dates", None, lambda x: not x.covered_without_dates),
        ("coverage without Chinese names (nor terms)", None, lambda x: not x.covered_without_zh_names),
        (
            "coverage without Chinese names+cosine (default c)",
            default_c,
            lambda x: x.best_cosine < default_c or not x.covered_without_zh_names,
        ),
        (
            "coverage without unknown companies+cosine (default c)",
            default_c,
            lambda x: x.best_cosine < default_c or not x.covered_by_names,
        ),
    ]
    for with_coverage in (False, True):
        chosen = _best_threshold(tune, with_coverage)
        label = "coverage+cosine" if with_coverage else "cosine"
        for name, c in ((f"{label} (default c)", default_c), (f"{label} (c tuned on held-out)", chosen)):
            designs.append((name, c, lambda x, c=c, w=with_coverage: x.best_cosine < c or (w and not x.covered)))
    for name, c, web in designs:
        local, away, n = _shares(report, web)
        rows.append(GateRow(evalset.name, name, c, round(local, 3), round(away, 3), n))
        print(f"[route {evalset.name}] {name:36s} c={c!s:8s} answerable local {local:.3f}  out-of-KB away {away:.3f}")
    rows += _comparative_rows(evalset.name, report, default_c)
    return RouteReport(evalset.name, backend, rows, cases)


def _comparative_rows(dataset: str, report: Sequence[Case], default_c: float) -> list[GateRow]:
    """Both directions of the period rule on the dev half: year Y-1 asked of the Y filing kept local, and
    the out-of-KB questions (own filing left out) sent away, as served and with any Y+1 filing counting."""
    comparative = [c for c in report if c.comparative]
    rows = []
    designs: list[tuple[str, float | None, Any, Any]] = [
        ("period: year Y from the Y+1 filing (served)", None, lambda x: not x.covered, lambda x: not x.covered),
        (
            "period: any Y+1 filing counts",
            None,
            lambda x: not x.covered_next_year,
            lambda x: not x.covered_next_year,
        ),
        (
            "period: year Y from the Y+1 filing (served)+cosine (default c)",
            default_c,
            lambda x: x.best_cosine < default_c or not x.covered,
            lambda x: x.best_cosine < default_c or not x.covered,
        ),
    ]
    for name, c, web_comparative, web_out in designs:
        local = float(np.mean([not web_comparative(x) for x in comparative])) if comparative else 0.0
        away = _shares(report, web_out)[1]
        rows.append(GateRow(dataset, name, c, round(local, 3), round(away, 3), len(comparative)))
        shown = f"year Y from the Y+1 filing kept local {local:.3f} ({len(comparative)})"
        print(f"[route {dataset}] {name}: {shown}, out-of-KB away {away:.3f}")
    return rows


TERM_STEPS = [round(0.05 * i, 2) for i in range(21)]
KEEP_LOCAL = 0.90  # issue 11: at most 10 % of answerable questions may leave the KB


def _with_terms(minimum: float) -> Any:
    """The served gate with another minimum term coverage."""
    return lambda x: not x.covered_without_terms or (not x.names_company and x.term_coverage < minimum)


def term_threshold(reports: Sequence[RouteReport]) -> tuple[float, list[str]]:
    """The largest minimum term coverage (in 0.05 steps) that keeps >= KEEP_LOCAL of the answerable
    questions local on the held-out half of *every* dataset run together, and what it does on each
    dataset's dev half: one setting for all of them, chosen on questions that do not report it."""
    chosen = 0.0
    for minimum in TERM_STEPS:
        tuned = [_shares([c for c in r.cases if c.held_out], _with_terms(minimum))[0] for r in reports]
        if all(local >= KEEP_LOCAL for local in tuned):
            chosen = minimum
    lines = [
        f"Minimum term coverage chosen on the held-out halves of {', '.join(r.dataset for r in reports)}: "
        f"**{chosen:.2f}** (served: {MIN_TERM_COVERAGE:.2f}).",
        "",
    ]
    for r in reports:
        local, away, n = _shares([c for c in r.cases if not c.held_out], _with_terms(chosen))
        lines.append(
            f"- {r.dataset} (dev, {n} questions): answerable kept local {local:.3f}, out-of-KB sent away {away:.3f}"
        )
    return chosen, lines


def markdown(reports: Sequence[RouteReport]) -> str:
    lines = [
        "| dataset | gate | c | answerable kept local | out-of-KB sent to web / refused | dev questions |",
        "|---|---|---|---|---|---|",
    ]
    for r in reports:
        for row in r.rows:
            c = "" if row.threshold is None else f"{row.threshold:.3f}"
            lines.append(
                f"| {row.dataset} | {row.design} | {c} | {row.answerable_local:.3f} | {row.out_of_kb_web:.3f} | "
                f"{row.questions} |"
            )
    if reports:
        lines += ["", *term_threshold(reports)[1]]
    return "\n".join(lines) + "\n"
