"""The catalog gate in the flow: a KB company's missing fiscal year, or a name no chunk mentions, sends
the question to the web however high the cosine; covered questions stay local."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest
from fixtures.fake_peers import FakePeers, OnePageWeb, SearchCall, flow_over
from prometheus_client import REGISTRY
from weaverbird_common.ingest_messages import IngestMessage
from weaverbird_orchestrator.catalog import Catalog
from weaverbird_orchestrator.convert import route_proto
from weaverbird_orchestrator.domain import Passage, Retrieval, Route
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.metrics import record_question

# A strong cosine on some other company's page: the case the cosine gate cannot catch.
_HIT = Passage("p1", "Net sales were USD 512 million.", 0.80, "doc-1", "Aurora FY2023", "aurora.md", 0, "local")


class CatalogPeers(FakePeers):
    """One strong local hit whatever the filters, a lexical index holding `words`, and the catalog below."""

    def __init__(self, words: set[str]) -> None:
        super().__init__([_HIT], [])
        self.words = words  # what the lexical index holds
        self.lexical_lookups: list[str] = []

    def search_result(self, call: SearchCall) -> list[Passage]:
        if call.mode == "lexical":
            self.lexical_lookups.append(call.text)
            return [_HIT] if call.text.lower() in self.words else []
        return [_HIT]

    async def catalog(self) -> Catalog:
        return Catalog(
            companies={"AURORA": ["Aurora Devices Inc.", "AURD"]},
            points=10,
            years={"AURORA": [2022, 2023]},
            quarters={"AURORA": [(2023, 2)]},  # one 10-Q besides the annual reports
        )

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


async def _route(flow: QuestionFlow, question: str) -> tuple[Route, str]:
    retrieval = await flow.retrieve(await flow.params(question))
    return retrieval.decision.route, retrieval.decision.note


async def test_a_covered_company_and_year_stays_local() -> None:
    route, _ = await _route(flow_over(CatalogPeers({"revenue"})), "What were Aurora's net sales in FY2023?")
    assert route == Route.LOCAL


async def test_a_year_the_company_has_no_document_for_goes_to_the_web() -> None:
    route, note = await _route(flow_over(CatalogPeers(set())), "What were AURD's net sales in fiscal 2019?")
    assert route == Route.WEB
    assert "no 2019 document of Aurora Devices Inc." in note


async def test_a_quarter_the_company_has_no_document_for_goes_to_the_web() -> None:
    route, note = await _route(flow_over(CatalogPeers(set())), "What were Aurora's net sales in Q3 2023?")
    assert route == Route.WEB
    assert "no 2023 Q3 document of Aurora Devices Inc." in note and "2023 Q2" in note
    route, _ = await _route(
        flow_over(CatalogPeers(set())), "What were Aurora's net sales in the second quarter of 2023?"
    )
    assert route == Route.LOCAL


async def test_a_name_no_chunk_mentions_goes_to_the_web_and_known_words_do_not() -> None:
    peers = CatalogPeers({"ebitda"})
    route, note = await _route(flow_over(peers), "What did Zephyr Motors report as EBITDA in 2023?")
    assert route == Route.WEB and "never mentions Zephyr, Motors" in note
    assert peers.lexical_lookups == ["Zephyr", "Motors"]  # EBITDA is finance vocabulary, not looked up
    peers = CatalogPeers({"borealis"})
    route, _ = await _route(flow_over(peers), "What did the report say about Borealis?")
    assert route == Route.LOCAL  # the KB mentions it, even if no document is about it


async def test_a_company_the_catalog_does_not_know_goes_to_the_web_even_if_chunks_mention_it() -> None:
    # A filing names its suppliers and peers: the words are in the KB, no document is about Kestrel.
    peers = CatalogPeers({"kestrel", "mining"})
    route, note = await _route(flow_over(peers), "What was Kestrel Mining's EBITDA in 2023?")
    assert route == Route.WEB and "holds no document of Kestrel Mining" in note
    assert peers.lexical_lookups == []  # the catalog decides; no look-up needed
    route, _ = await _route(flow_over(CatalogPeers(set())), "What were Aurora Devices Inc.'s net sales in FY2023?")
    assert route == Route.LOCAL  # a catalog alias, written with its legal form


class DatedPeers(CatalogPeers):
    """The catalog also knows Aurora's newest document date (every chunk of it is dated)."""

    async def catalog(self) -> Catalog:
        return replace(await super().catalog(), latest={"AURORA": "2023-07-20"})


async def test_a_date_after_the_companys_newest_document_goes_to_the_web() -> None:
    route, note = await _route(flow_over(DatedPeers(set())), "Which segment did Aurora spin off on August 30, 2023?")
    assert route == Route.WEB and "dated 2023-07-20, before 2023-08-30" in note
    route, _ = await _route(flow_over(DatedPeers(set())), "What were Aurora's net sales as of July 2, 2023?")
    assert route == Route.LOCAL
    # Without dates in the catalog (some page of the company undated) the question stays local.
    route, _ = await _route(flow_over(CatalogPeers(set())), "Which segment did Aurora spin off on August 30, 2023?")
    assert route == Route.LOCAL


class TypedPeers(CatalogPeers):
    """Every document of Aurora is of a known kind: annual reports and one 10-Q, no earnings release."""

    async def catalog(self) -> Catalog:
        return replace(await super().catalog(), kinds={"AURORA": ["10K", "10Q"]})


async def test_a_kind_of_document_the_company_has_none_of_goes_to_the_web() -> None:
    route, note = await _route(
        flow_over(TypedPeers(set())), "What did Aurora's FY2023 earnings release say about margins?"
    )
    assert route == Route.WEB and "no earnings release of Aurora Devices Inc. (it has 10K, 10Q)" in note
    route, _ = await _route(flow_over(TypedPeers(set())), "What were Aurora's net sales in its FY2023 10-K?")
    assert route == Route.LOCAL
    # Kinds not all known: the question stays local.
    route, _ = await _route(
        flow_over(CatalogPeers(set())), "What did Aurora's FY2023 earnings release say about margins?"
    )
    assert route == Route.LOCAL


class Published:
    def __init__(self) -> None:
        self.messages: list[IngestMessage] = []

    def publish(self, message: IngestMessage) -> None:
        self.messages.append(message)


async def _web_page_filed(
    peers: CatalogPeers, page: tuple[str, str], question: str, **flow_options: object
) -> tuple[Retrieval, list[str]]:
    """Retrieves for `question` with one web page (title, text) to find; the companies its ingest was filed under."""
    published = Published()
    web = OnePageWeb("web-1", page[0], "https://x.example/page", page[1])
    flow = flow_over(peers, web=web, publisher=published, **flow_options)
    retrieval = await flow.retrieve(await flow.params(question))
    return retrieval, [m.company for m in published.messages]


async def test_a_web_page_about_the_unknown_company_is_filed_under_it() -> None:
    # So the catalog knows the company once the page is ingested, and the next question stays local.
    page = ("Kestrel Mining results", "Kestrel Mining reported EBITDA of USD 93.1 million for 2023.")
    retrieval, filed = await _web_page_filed(
        CatalogPeers({"kestrel"}), page, "What was Kestrel Mining's EBITDA in 2023?"
    )
    assert retrieval.decision.route == Route.WEB and retrieval.decision.documents_queued == 1
    assert filed == ["Kestrel Mining"]


async def test_the_gate_can_be_turned_off() -> None:
    route, _ = await _route(flow_over(CatalogPeers(set()), coverage_gate=False), "What was Zephyr's EBITDA in 2023?")
    assert route == Route.LOCAL


async def test_a_passage_about_another_year_is_not_given_first() -> None:
    outlook = Passage("p0", "For fiscal 2025 Aurora expects net sales of <figure>.", 0.9, "d", "t", "s", 0, "local")
    results = Passage("p1", "Net sales for fiscal 2023 were <figure>.", 0.7, "d", "t", "s", 0, "local")

    class Ordered(CatalogPeers):
        def search_result(self, call: SearchCall) -> list[Passage]:
            return [outlook, results]

    flow = flow_over(Ordered(set()))
    retrieval = await flow.retrieve(await flow.params("What were Aurora's net sales in fiscal 2023?"))
    assert [p.id for p in retrieval.ranked] == ["p1", "p0"]
    assert retrieval.decision.best_local_score == pytest.approx(0.9)  # the gate still sees every cosine


async def test_a_filing_of_a_year_before_the_question_is_not_given() -> None:
    # A FY2018 report holds nothing about FY2023; beside the FY2023 report it only offers the wrong year.
    old = Passage("p0", "Operating margin was 22.0%.", 0.9, "d18", "t", "s", 0, "local", company="AURORA", year=2018)
    new = Passage("p1", "Operating margin declined.", 0.7, "d23", "t", "s", 0, "local", company="AURORA", year=2023)
    web = Passage("p2", "Analysts on operating margins.", 0.6, "w", "t", "https://x", 0, "local")  # no year: kept

    class Ordered(CatalogPeers):
        def search_result(self, call: SearchCall) -> list[Passage]:
            return [old, new, web]

    flow = flow_over(Ordered(set()))
    retrieval = await flow.retrieve(await flow.params("What drove Aurora's operating margin change in FY2023?"))
    assert [p.id for p in retrieval.ranked] == ["p1", "p2"]
    # An outlook is stated in earlier documents: nothing is left out for it.
    retrieval = await flow.retrieve(await flow.params("What operating margin does Aurora expect for FY2023?"))
    assert [p.id for p in retrieval.ranked] == ["p0", "p1", "p2"]


class UndatedPeers(CatalogPeers):
    """Aurora also has web pages that carry no year; the lexical index holds `words` in them only."""

    def __init__(self, words: set[str]) -> None:
        super().__init__(words)
        self.lookup_filters: list[dict[str, str | int]] = []

    def search_result(self, call: SearchCall) -> list[Passage]:
        if call.mode == "lexical":
            self.lookup_filters.append(dict(call.filters))
        return super().search_result(call)

    async def catalog(self) -> Catalog:
        return replace(await super().catalog(), undated={"AURORA": 12})


async def test_an_undated_page_of_the_company_that_mentions_the_year_covers_it() -> None:
    # A filing fetched from the web is often stored without a year: it may be the year asked about.
    peers = UndatedPeers({"2019"})
    route, _ = await _route(flow_over(peers), "What were Aurora's net sales in fiscal 2019?")
    assert route == Route.LOCAL
    assert peers.lookup_filters == [{"company": "AURORA", "year": 0}]  # only the company's undated pages
    route, note = await _route(flow_over(UndatedPeers({"2020"})), "What were Aurora's net sales in fiscal 2019?")
    assert route == Route.WEB and "no 2019 document of Aurora Devices Inc." in note
    route, _ = await _route(flow_over(CatalogPeers({"2019"})), "What were Aurora's net sales in fiscal 2019?")
    assert route == Route.WEB  # no undated pages: the dated catalog decides, nothing is looked up


async def test_the_next_years_filing_that_reports_the_year_covers_it() -> None:
    # Aurora's FY2022 report carries FY2021 as its comparative column: the KB holds FY2021.
    peers = UndatedPeers({"2021"})
    route, _ = await _route(flow_over(peers), "What were Aurora's net sales in fiscal 2021?")
    assert route == Route.LOCAL
    assert peers.lookup_filters == [{"company": "AURORA", "year": 2022}]  # only the next year's filing
    route, note = await _route(flow_over(UndatedPeers({"2019"})), "What were Aurora's net sales in fiscal 2021?")
    assert route == Route.WEB and "no 2021 document of Aurora Devices Inc." in note  # the filing never writes 2021
    peers = UndatedPeers({"2019"})
    route, _ = await _route(flow_over(peers), "What were Aurora's net sales in fiscal 2020?")
    assert route == Route.WEB  # no filing of 2021 to carry 2020, and no undated page writes it
    assert peers.lookup_filters == [{"company": "AURORA", "year": 0}]  # only the undated pages were asked


async def test_pages_for_a_short_name_of_a_known_company_are_filed_under_that_company() -> None:
    # "MGM" starts MGMRESORTS, the deployment's name for it: a second company "MGM" would split its pages.
    page = ("MGM Resorts results", "MGM Resorts reported EBITDAR of USD 4.1 billion for 2022.")
    question = "What was the EBITDAR of MGM's Las Vegas segment in 2022?"
    retrieval, filed = await _web_page_filed(CatalogPeers(set()), page, question, known_companies=["MGMRESORTS"])
    assert retrieval.decision.route == Route.WEB and "MGM" in retrieval.decision.note
    assert filed == ["MGMRESORTS"]


class FilterRecordingPeers(CatalogPeers):
    """Records the filters of every search that is not a name look-up."""

    def __init__(self) -> None:
        super().__init__(set())
        self.filters_seen: list[dict[str, str | int]] = []

    def search_result(self, call: SearchCall) -> list[Passage]:
        if call.mode != "lexical":
            self.filters_seen.append(dict(call.filters))
        return super().search_result(call)


@pytest.mark.parametrize(
    ("question", "searched", "period"),
    [
        # A KB company: its period narrows the search to that company's document for it.
        ("What were Aurora's net sales in fiscal 2023?", {"company": "AURORA", "year": 2023}, 2023),
        # No company: the period alone would search only dated documents (other companies' filings) and
        # hide undated news and web pages, so it ranks passages and feeds the gate instead.
        ("2023年三季度全国铁路发送旅客人次增长多少？", {}, 2023),
        ("How much did passenger trips grow in Q3 2023?", {}, 2023),
    ],
)
async def test_a_period_narrows_the_search_only_with_its_company(
    question: str, searched: dict[str, str | int], period: int
) -> None:
    peers = FilterRecordingPeers()
    flow = flow_over(peers, coverage_gate=False)
    params = await flow.params(question)
    assert params.filters.get("year") == period  # still read from the question
    await flow.retrieve(params)
    assert peers.filters_seen[0] == searched


class ChineseNewsPeers(CatalogPeers):
    """A KB of Chinese news. The question's own search returns `found`; the lexical index, like jieba's,
    returns chunks sharing only a piece (one character) of a name looked up, or none at all when
    `segmented_apart` (jieba cut the name differently inside the sentence)."""

    NEWS = (
        Passage("n1", "【德必集团：目前70%-80%的项目都属于旧楼改造】财联社电。", 0.8, "d1", "德必", "s", 0, "local"),
        Passage("n2", "【10月份沪牌拍卖结果公布中标率17.3%】财联社电。", 0.6, "d2", "沪牌", "s", 0, "local"),
    )

    def __init__(self, found: Sequence[Passage] = NEWS, segmented_apart: bool = False) -> None:
        super().__init__(set())
        self.found = list(found)
        self.segmented_apart = segmented_apart

    def search_result(self, call: SearchCall) -> list[Passage]:
        if call.mode == "lexical":
            self.lexical_lookups.append(call.text)
            return [] if self.segmented_apart else [p for p in self.NEWS if set(call.text) & set(p.text)][: call.k]
        return self.found


@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("德必集团目前多少项目属于旧楼改造？", Route.LOCAL),  # "德必" is in a chunk
        # "雅居乐" is in no chunk; the lexical index returns the 德必 chunk for its "集团", which does not count.
        ("雅居乐集团2023年1月份的预售金额合计为多少人民币？", Route.WEB),
        ("陈继锋计划减持沃尔德股份的总数是多少？", Route.WEB),
    ],
)
async def test_a_chinese_name_no_chunk_holds_sends_the_question_away(question: str, route: Route) -> None:
    peers = ChineseNewsPeers()
    flow = flow_over(peers)
    decision = (await flow.retrieve(await flow.params(question))).decision
    assert decision.route == route, decision.note
    if route == Route.WEB:
        assert "the knowledge base never mentions" in decision.note and peers.lexical_lookups


@pytest.mark.parametrize(
    "peers",
    [
        # The question's search missed the chunk; the look-up of the name finds it.
        ChineseNewsPeers(found=ChineseNewsPeers.NEWS[1:]),
        # The look-up cannot find it (segmented apart), but the question's own search did.
        ChineseNewsPeers(segmented_apart=True),
    ],
)
async def test_a_chinese_name_counts_as_known_from_either_search(peers: ChineseNewsPeers) -> None:
    flow = flow_over(peers)
    decision = (await flow.retrieve(await flow.params("德必集团目前多少项目属于旧楼改造？"))).decision
    assert decision.route == Route.LOCAL, decision.note


class TermPeers(CatalogPeers):
    """The question's search finds passages holding `share` of its terms; records whether it asked."""

    def __init__(self, share: float | None) -> None:
        super().__init__(set())
        self.share = share
        self.asked_terms: list[bool] = []

    def search_result(self, call: SearchCall) -> list[Passage]:
        if call.mode == "lexical":
            return super().search_result(call)
        self.asked_terms.append(call.term_coverage)
        return [replace(_HIT, term_coverage=self.share if call.term_coverage else None)]


@pytest.mark.parametrize(
    ("share", "route"),
    [(0.3, Route.WEB), (0.8, Route.LOCAL), (None, Route.LOCAL)],  # None: a retriever that does not measure it
)
async def test_passages_holding_too_few_of_the_questions_words_send_it_away(share: float | None, route: Route) -> None:
    peers = TermPeers(share)
    decision = await _route(flow_over(peers), "What was the change in deferred revenue between 2018 and 2019?")
    assert decision[0] == route, decision[1]
    assert peers.asked_terms[0] is True
    if route == Route.WEB:
        assert "no passage holds most of the question's words (at best 30%, needs 60%)" in decision[1]


async def test_a_kb_company_leaves_the_decision_to_the_catalog_and_zero_turns_the_rule_off() -> None:
    peers = TermPeers(0.1)
    assert (await _route(flow_over(peers), "What were Aurora's net sales in fiscal 2023?"))[0] == Route.LOCAL
    assert peers.asked_terms[0] is False  # not measured: nothing reads it
    off = TermPeers(0.1)
    question = "What was the change in deferred revenue between 2018 and 2019?"
    assert (await _route(flow_over(off, min_term_coverage=0.0), question))[0] == Route.LOCAL
    gate_off = TermPeers(0.1)
    assert (await _route(flow_over(gate_off, coverage_gate=False), question))[0] == Route.LOCAL
    assert gate_off.asked_terms[0] is False


@pytest.mark.parametrize(
    ("peers", "question", "local_kept"),
    [
        # Only the question's words were missing: the local passage still competes with the web page.
        (TermPeers(0.3), "What was the change in deferred revenue between 2018 and 2019?", True),
        # A company the KB never heard of: its passages are about someone else and give way to the web.
        (CatalogPeers(set()), "What was Kestrel Mining's EBITDA in 2023?", False),
    ],
)
async def test_the_web_replaces_local_passages_only_when_they_are_about_something_else(
    peers: CatalogPeers, question: str, local_kept: bool
) -> None:
    web = OnePageWeb("web-1", "Deferred revenue", "https://x.example/d", "Deferred revenue rose in 2019 from 2018.")
    flow = flow_over(peers, web=web, publisher=Published())
    retrieval = await flow.retrieve(await flow.params(question))
    assert retrieval.decision.route == Route.WEB
    origins = {p.origin for p in retrieval.ranked}
    assert "web" in origins
    assert ("local" in origins) == local_kept


@pytest.mark.parametrize(
    ("peers", "question", "threshold", "reason"),
    [
        (CatalogPeers(set()), "What were Aurora's net sales in FY2023?", 0.3, "covered"),
        (CatalogPeers(set()), "What were Aurora's net sales in FY2023?", 0.9, "low_score"),
        (CatalogPeers(set()), "What were AURD's net sales in fiscal 2019?", 0.3, "period"),
        (CatalogPeers(set()), "What were Aurora's net sales in Q3 2023?", 0.3, "quarter"),
        (DatedPeers(set()), "Which segment did Aurora spin off on August 30, 2023?", 0.3, "date"),
        (CatalogPeers(set()), "What was Kestrel Mining's EBITDA in 2023?", 0.3, "company"),
        (CatalogPeers(set()), "What did Zephyr Motors report as EBITDA in 2023?", 0.3, "name"),
        (TermPeers(0.3), "What was the change in deferred revenue between 2018 and 2019?", 0.3, "terms"),
    ],
)
async def test_the_route_reason_names_what_decided_the_route_and_is_counted(
    peers: CatalogPeers, question: str, threshold: float, reason: str
) -> None:
    # Operators see why questions leave the KB (a panel per reason), not only that they do.
    series = ("weaverbird_orchestrator_route_reasons_total", {"reason": reason})
    before = REGISTRY.get_sample_value(*series) or 0.0
    flow = flow_over(peers, threshold=threshold)
    retrieval = await flow.retrieve(await flow.params(question))
    assert retrieval.decision.reason == reason, retrieval.decision.note
    assert (retrieval.decision.route == Route.LOCAL) == (reason == "covered")
    assert route_proto(retrieval.decision).route_reason == reason
    record_question(retrieval.decision)
    assert REGISTRY.get_sample_value(*series) == before + 1
