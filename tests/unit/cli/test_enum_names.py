"""The CLI's enum words come from the proto enums (weaverbird_common.proto_names), the same as the HTTP
gateway's: --task and --origin choices, and the names in the route line and the KB listing."""

from __future__ import annotations

from weaverbird.v1 import common_pb2, orchestrator_pb2, retriever_pb2
from weaverbird_cli import render


def test_choices_are_the_proto_values_in_proto_order() -> None:
    assert render.TASKS == {
        "lookup": common_pb2.TASK_LOOKUP,
        "calculation": common_pb2.TASK_CALCULATION,
        "extraction": common_pb2.TASK_EXTRACTION,
        "analysis": common_pb2.TASK_ANALYSIS,
    }
    assert sorted(render.DOCUMENT_ORIGINS) == ["local", "user", "web"]
    assert render.DOCUMENT_ORIGINS["user"] == retriever_pb2.DOCUMENT_ORIGIN_USER


def test_names_shown_and_the_fallback_for_unset_or_newer_values() -> None:
    assert render.task_name(common_pb2.TASK_EXTRACTION) == "extraction"
    assert render.task_name(42) == "unspecified"
    web = orchestrator_pb2.RouteEvent(route=orchestrator_pb2.ROUTE_WEB)
    assert "route=web " in render.route_report(web)
    assert "route=? " in render.route_report(orchestrator_pb2.RouteEvent(route=9))
    user = retriever_pb2.DocumentProvenance(origin=retriever_pb2.DOCUMENT_ORIGIN_USER)
    assert render.provenance_text(user) == "user"
    assert render.provenance_text(retriever_pb2.DocumentProvenance()) == "?"
