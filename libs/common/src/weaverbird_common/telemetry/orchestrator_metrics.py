"""The orchestrator's own metrics (weaverbird_orchestrator_*). route: local | web."""

from __future__ import annotations

from weaverbird_common.coverage import GAP_KINDS
from weaverbird_common.telemetry.registry import ServiceMetrics

_metrics = ServiceMetrics("orchestrator")
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
ORCHESTRATOR_QUESTIONS = _metrics.counter(
    "weaverbird_orchestrator_questions_total", "Questions answered, by route.", ("route",)
)
ORCHESTRATOR_REQUEST_DURATION = _metrics.histogram(
    "weaverbird_orchestrator_request_duration_seconds", "Whole-question latency, by route.", ("route",)
)
ORCHESTRATOR_STAGE_DURATION = _metrics.histogram(
    "weaverbird_orchestrator_stage_duration_seconds",
    "Latency of one stage of a question; stage is one of ORCHESTRATOR_STAGES.",
    ("stage", "route"),
)
ORCHESTRATOR_BEST_LOCAL_SCORE = _metrics.histogram(
    "weaverbird_orchestrator_best_local_score",
    "Cosine similarity of the best local passage, which decides the route.",
    buckets=_SCORE_BUCKETS,
)
# reason: why a question took its route (RouteEvent.route_reason): covered | low_score | a coverage gap.
ORCHESTRATOR_ROUTE_REASONS = ("covered", "low_score", *GAP_KINDS)
ORCHESTRATOR_ROUTE_REASON = _metrics.counter(
    "weaverbird_orchestrator_route_reasons_total",
    "Questions by why they took their route: covered (local), low_score, or the coverage gap that sent "
    "them to the web.",
    ("reason",),
)
for _reason in ORCHESTRATOR_ROUTE_REASONS:
    ORCHESTRATOR_ROUTE_REASON.labels(reason=_reason)  # every series exists from the start, at zero
ORCHESTRATOR_DOCUMENTS_PUBLISHED = _metrics.counter(
    "weaverbird_orchestrator_documents_published_total", "Web pages published to the ingest topic."
)
ORCHESTRATOR_WEB_SEARCH_FAILURES = _metrics.counter(
    "weaverbird_orchestrator_web_search_failures_total", "Web searches that failed or timed out."
)
# result: supported | unsupported | no_numbers | refused (the AnswerCheck values of orchestrator.proto).
ORCHESTRATOR_ANSWER_CHECK_RESULTS = ("supported", "unsupported", "no_numbers", "refused")
ORCHESTRATOR_ANSWER_CHECKS = _metrics.counter(
    "weaverbird_orchestrator_answer_numeric_checks_total",
    "Answers by numeric check result: were the answer's figures found in the passages it cites.",
    ("result",),
)
for _result in ORCHESTRATOR_ANSWER_CHECK_RESULTS:
    ORCHESTRATOR_ANSWER_CHECKS.labels(result=_result)  # every series exists from the start, at zero
