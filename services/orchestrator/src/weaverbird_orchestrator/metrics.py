"""Records one answered question in the orchestrator's Prometheus metrics."""

from __future__ import annotations

from weaverbird_common.telemetry import orchestrator_metrics
from weaverbird_common.telemetry.registry import register_metrics

from weaverbird_orchestrator.domain import RouteDecision

# The flow records into these wherever it runs (serve_forever registers them too; this is idempotent),
# so in-process users such as benchmarks and tests see them in the default registry.
register_metrics("orchestrator")

# Stage name in the metric -> field of Timings (milliseconds).
_STAGES = {
    "embed": "embed_ms",
    "local_search": "local_search_ms",
    "web_search": "web_search_ms",
    "web_fetch": "web_fetch_ms",
    "web_embed": "web_embed_ms",
    "generate_first_token": "first_token_ms",
    "generate": "generate_ms",
}


def record_question(decision: RouteDecision) -> None:
    """Counts the question by route (fallback rate = rate(web) / rate(all)) and its stage latencies."""
    route = decision.route.value
    orchestrator_metrics.ORCHESTRATOR_QUESTIONS.labels(route=route).inc()
    orchestrator_metrics.ORCHESTRATOR_ROUTE_REASON.labels(reason=decision.reason).inc()
    orchestrator_metrics.ORCHESTRATOR_BEST_LOCAL_SCORE.observe(decision.best_local_score)
    orchestrator_metrics.ORCHESTRATOR_REQUEST_DURATION.labels(route=route).observe(decision.timings.total_ms / 1000)
    for stage, field in _STAGES.items():
        ms = getattr(decision.timings, field)
        if ms > 0:  # stages that did not run (web on the local route, generation in Retrieve) stay out
            orchestrator_metrics.ORCHESTRATOR_STAGE_DURATION.labels(stage=stage, route=route).observe(ms / 1000)
    if decision.documents_queued:
        orchestrator_metrics.ORCHESTRATOR_DOCUMENTS_PUBLISHED.inc(decision.documents_queued)
    if decision.route.value == "web" and decision.web_status not in ("ok", "not_configured"):
        orchestrator_metrics.ORCHESTRATOR_WEB_SEARCH_FAILURES.inc()
