"""What the user is told: one verdict word, the score shown only where it decided, notes as codes with
plain parameters (display names, never a Python literal)."""

from __future__ import annotations

from fixtures.fake_peers import FakePeers, SearchCall, flow_over
from weaverbird_orchestrator.catalog import Catalog, display_name
from weaverbird_orchestrator.convert import route_proto
from weaverbird_orchestrator.domain import Passage, Route


def _hit(score: float) -> Passage:
    return Passage("p1", "Revenue was USD 1,284.6 million.", score, "d1", "Northwind FY2024", "nw.md", 0, "local")


class NorthwindPeers(FakePeers):
    """Northwind's FY2024 filing; searches with a year filter find nothing (no document is dated 2023)."""

    def __init__(self, score: float) -> None:
        super().__init__([_hit(score)], ["Revenue was USD 1,284.6 million [1]."])

    def search_result(self, call: SearchCall) -> list[Passage]:
        return [] if "year" in call.filters and call.mode != "lexical" else self.hits[: call.k]

    async def catalog(self) -> Catalog:
        return Catalog(
            companies={"NORTHWIND_ROBOTICS": ["NORTHWIND_ROBOTICS", "Northwind Robotics"]},
            years={"NORTHWIND_ROBOTICS": [2024]},
        )


async def test_a_covered_question_is_local_and_its_score_decided() -> None:
    flow = flow_over(NorthwindPeers(0.8))
    decision = (await flow.retrieve(await flow.params("What was Northwind Robotics' revenue in fiscal 2024?"))).decision
    assert (decision.route, decision.verdict, decision.score_decided) == (Route.LOCAL, "local", True)


async def test_weak_evidence_without_web_is_refused_not_web_and_notes_carry_codes() -> None:
    flow = flow_over(NorthwindPeers(0.1))
    decision = (await flow.retrieve(await flow.params("What was Northwind Robotics' revenue in fiscal 2024?"))).decision
    assert decision.route == Route.WEB and decision.verdict == "refused"  # never the word "web"
    codes = [n.code for n in decision.notices]
    assert codes == ["filters_weak_period", "low_score", "web_not_configured"]
    assert decision.score_decided
    period = decision.notices[0]
    assert dict(period.params) == {"company": "Northwind Robotics", "filters": "Northwind Robotics, 2024"}
    assert "{" not in decision.note and "NORTHWIND_ROBOTICS" not in decision.note
    event = route_proto(decision)
    assert event.verdict == "refused" and [n.code for n in event.notices] == codes
    assert event.notices[1].params["best"] == "0.100"
    # Without refusing, the answer rests on local passages though the KB was weak: "no_web".
    flow = flow_over(NorthwindPeers(0.1), refuse_without_evidence=False)
    decision = (await flow.retrieve(await flow.params("What was Northwind Robotics' revenue in fiscal 2024?"))).decision
    assert decision.verdict == "no_web"


async def test_a_coverage_gap_decides_whatever_the_score() -> None:
    flow = flow_over(NorthwindPeers(0.9))
    decision = (await flow.retrieve(await flow.params("What was Northwind Robotics' revenue in fiscal 2019?"))).decision
    assert decision.route == Route.WEB and not decision.score_decided
    assert decision.notices[-2].code == "coverage_gap" and decision.notices[-2].params["gap"] == "period"
    assert "document of Northwind Robotics" in decision.note


def test_display_names_prefer_a_written_name_over_the_key() -> None:
    assert display_name("NORTHWIND_ROBOTICS", ["NORTHWIND_ROBOTICS", "Northwind Robotics"]) == "Northwind Robotics"
    assert display_name("BLUEFIN_LOGISTICS", []) == "Bluefin Logistics"
    assert display_name("AES_CORPORATION", []) == "AES Corporation"
    assert display_name("青松新能源", []) == "青松新能源"


class CrossLanguagePeers(FakePeers):
    """AMAZON's filings are English; a Chinese news item about it carries no company tag."""

    FILING = Passage("f1", "Net product sales grew in 2022.", 0.42, "amzn-10k", "AMAZON 10-K", "a.pdf", 3, "local")
    NEWS = Passage(
        "n1", "亚马逊16.5亿美元收购iRobot的交易引发欧盟深入调查。", 0.71, "news-1", "财联社", "n.md", 0, "local"
    )

    def __init__(self) -> None:
        super().__init__([self.FILING], ["16.5亿美元 [1]。"])

    def search_result(self, call: SearchCall) -> list[Passage]:
        return [self.FILING] if call.filters.get("company") == "AMAZON" else [self.NEWS, self.FILING]

    async def catalog(self) -> Catalog:
        return Catalog(companies={"AMAZON": ["AMAZON", "亚马逊"]}, years={"AMAZON": [2022]})


async def test_a_company_whose_documents_are_all_in_the_other_language_does_not_hide_news_in_the_questions() -> None:
    flow = flow_over(CrossLanguagePeers())
    params = await flow.params("亚马逊以多少美元收购iRobot的交易引发了欧盟的深入调查?")
    assert params.filters.get("company") == "AMAZON"
    retrieval = await flow.retrieve(params)
    assert [p.id for p in retrieval.ranked][:2] == ["n1", "f1"]  # the Chinese news first: its cosine is higher
    # An English question about the same company keeps its filtered hits only.
    english = await flow.retrieve(await flow.params("What were 亚马逊's net product sales in 2022?"))
    assert "n1" not in [p.id for p in english.ranked]
