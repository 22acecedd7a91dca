"""The orchestrator's own metrics (weaverbird_orchestrator_*). route: local | web."""

from __future__ import annotations

import prometheus_client

from weaverbird_common.coverage import GAP_KINDS
from weaverbird_common.telemetry.registry import LATENCY_BUCKETS, owned

_SCORE_BUCKETS = tuple(round(-1.0 + 0.1 * i, 1) for i in range(1, 21))  # -0.9 ... 1.0 (cosine)

ORCHESTRATOR_STAGES = (
    "embed",
    "local_search",
    "web_search",
    "web_fetch",
    "web_embed",
    "generate_first_token",
    "generate",
)
ORCHESTRATOR_QUESTIONS = owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_questions_total", "Questions answered, by route.", ("route",), registry=None
    ),
)
ORCHESTRATOR_REQUEST_DURATION = owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_request_duration_seconds",
        "Whole-question latency, by route.",
        ("route",),
        buckets=LATENCY_BUCKETS,
        registry=None,
    ),
)
ORCHESTRATOR_STAGE_DURATION = owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_stage_duration_seconds",
        "Latency of one stage of a question; stage is one of ORCHESTRATOR_STAGES.",
        ("stage", "route"),
        buckets=LATENCY_BUCKETS,
        registry=None,
    ),
)
ORCHESTRATOR_BEST_LOCAL_SCORE = owned(
    "orchestrator",
    prometheus_client.Histogram(
        "weaverbird_orchestrator_best_local_score",
        "Cosine similarity of the best local passage, which decides the route.",
        buckets=_SCORE_BUCKETS,
        registry=None,
    ),
)
# reason: why a question took its route (RouteEvent.route_reason): covered | low_score | a coverage gap.
ORCHESTRATOR_ROUTE_REASONS = ("covered", "low_score", *GAP_KINDS)
ORCHESTRATOR_ROUTE_REASON = owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_route_reasons_total",
        "Questions by why they took their route: covered (local), low_score, or the coverage gap that sent "
        "them to the web.",
        ("reason",),
        registry=None,
    ),
)
for _reason in ORCHESTRATOR_ROUTE_REASONS:
    ORCHESTRATOR_ROUTE_REASON.labels(reason=_reason)  # every series exists from the start, at zero
ORCHESTRATOR_DOCUMENTS_PUBLISHED = owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_documents_published_total", "Web pages published to the ingest topic.", registry=None
    ),
)
ORCHESTRATOR_WEB_SEARCH_FAILURES = owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_web_search_failures_total", "Web searches that failed or timed out.", registry=None
    ),
)
# result: supported | unsupported | no_numbers | refused (the AnswerCheck values of orchestrator.proto).
ORCHESTRATOR_ANSWER_CHECK_RESULTS = ("supported", "unsupported", "no_numbers", "refused")
ORCHESTRATOR_ANSWER_CHECKS = owned(
    "orchestrator",
    prometheus_client.Counter(
        "weaverbird_orchestrator_answer_numeric_checks_total",
        "Answers by numeric check result: were the answer's figures found in the passages it cites.",
        ("result",),
        registry=None,
    ),
)
for _result in ORCHESTRATOR_ANSWER_CHECK_RESULTS:
    ORCHESTRATOR_ANSWER_CHECKS.labels(result=_result)  # every series exists from the start, at zero
