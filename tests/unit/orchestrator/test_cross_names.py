"""Company names across languages: a Chinese question about an English filing's company, and back."""

from __future__ import annotations

from collections.abc import Mapping

from fixtures.fake_peers import FakePeers, flow_over
from weaverbird_orchestrator.catalog import Catalog
from weaverbird_orchestrator.domain import Passage

_AMAZON = Passage(
    "a1", "Total net sales were $280,522 million in 2019.", 0.7, "d1", "Amazon 10-K 2019", "amzn.pdf", 3, "local"
)


class BilingualPeers(FakePeers):
    """A catalog of one English and one Chinese company; the model names companies as `names` says."""

    def __init__(self, names: Mapping[tuple[str, str], str]) -> None:
        super().__init__([_AMAZON], ["亚马逊2019年的净销售额为280,522百万美元[1]。"])
        self.names = names
        self.name_calls: list[tuple[str, str]] = []

    async def catalog(self) -> Catalog:
        return Catalog(
            companies={"AMAZON": ["Amazon.com, Inc.", "AMZN"], "青松新能源": ["青松新能源", "Qingsong New Energy"]},
            years={"AMAZON": [2019, 2020], "青松新能源": [2024]},
        )

    def task_reply(self, question: str, language: str, task_fields: Mapping[str, object]) -> str | None:
        if task_fields.get("task") != "company_name":
            return None
        self.name_calls.append((question, language))
        return self.names.get((question, language), question)


async def test_a_chinese_name_of_an_english_filings_company_filters_to_it() -> None:
    peers = BilingualPeers({("亚马逊", "en"): "Amazon", ("Amazon", "zh"): "亚马逊"})
    flow = flow_over(peers)
    params = await flow.params("亚马逊2019年的净销售额是多少？")
    assert params.filters == {"company": "AMAZON", "year": 2019} and params.language == "zh"
    assert peers.name_calls == [("亚马逊", "en"), ("Amazon", "zh")]  # there and back
    await flow.params("亚马逊2020年的净销售额是多少？")
    assert len(peers.name_calls) == 2  # remembered, not asked again
    retrieval = await flow.retrieve(params)
    assert retrieval.decision.verdict == "local"  # not refused as a name the KB never mentions


async def test_a_name_the_model_does_not_know_or_gets_wrong_finds_nothing() -> None:
    peers = BilingualPeers({("亚马逊", "en"): "Amazonia Holdings"})
    params = await flow_over(peers).params("亚马逊2019年的净销售额是多少？")
    assert "company" not in params.filters
    # A wrong name of a KB company: asked back, the model names another company, so it is not taken.
    peers = BilingualPeers({("家得宝", "en"): "Amazon", ("Amazon", "zh"): "亚马逊"})
    params = await flow_over(peers).params("家得宝2019年的净销售额是多少？")
    assert "company" not in params.filters
    params = await flow_over(BilingualPeers({})).params("腾讯2019年的营业收入是多少？")  # echoed unchanged
    assert "company" not in params.filters


async def test_an_english_name_of_a_chinese_company_filters_to_it_and_known_names_ask_nothing() -> None:
    peers = BilingualPeers({("Greenpine Energy", "zh"): "青松新能源", ("青松新能源", "en"): "Greenpine Energy"})
    params = await flow_over(peers).params("What was Greenpine Energy's revenue in 2024?")
    assert params.filters.get("company") == "青松新能源"
    peers = BilingualPeers({})
    await flow_over(peers).params("What were Amazon's net sales in 2019?")
    assert peers.name_calls == []  # the catalog knows the company: no model call
    params = await flow_over(peers, cross_language_names=False).params("亚马逊2019年的净销售额是多少？")
    assert peers.name_calls == [] and "company" not in params.filters
