"""What the user is told about where an answer comes from, decided in one place.

The route (local / web) says where the flow looked; the user needs to know what the answer rests on. Both
the badge word (`verdict`) and the notes come from here, so they cannot contradict each other: a question
sent to the web with web search off is "no_web", not "web"; the score comparison is shown only when the
score decided. Notes are stable codes with parameters (rendered by the page in its language) and an
English text; parameters are display names and plain text, never a Python literal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from weaverbird_orchestrator.catalog import display_name
from weaverbird_orchestrator.domain import Notice, Passage, Route, RouteDecision

VERDICTS = ("local", "web", "no_web", "refused")


def filters_text(filters: Mapping[str, str | int], names: Mapping[str, str]) -> str:
    """A filter as a reader writes it: "Northwind Robotics, 2023, Q3" (company by its display name)."""
    parts = []
    if company := filters.get("company"):
        parts.append(shown_name(str(company), names))
    if year := filters.get("year"):
        parts.append(str(year))
    if quarter := filters.get("quarter"):
        parts.append(f"Q{quarter}")
    parts += [str(v) for k, v in filters.items() if k not in ("company", "year", "quarter") and v]
    return ", ".join(parts)


def shown_name(company: str, names: Mapping[str, str]) -> str:
    """A company as the user reads it: its catalog display name, or its key in words (a company the
    deployment lists that the catalog does not hold yet)."""
    return names.get(company) or display_name(company, ())


def period_weak(filters: Mapping[str, str | int], company: str, names: Mapping[str, str]) -> Notice:
    shown = shown_name(company, names)
    text = f"passages for {filters_text(filters, names)} were weak; searched {shown} without the period."
    return Notice("filters_weak_period", {"company": shown, "filters": filters_text(filters, names)}, text)


def filters_weak(filters: Mapping[str, str | int], names: Mapping[str, str]) -> Notice:
    shown = filters_text(filters, names)
    return Notice("filters_weak", {"filters": shown}, f"passages for {shown} were weak; searched without filters.")


def coverage_gap(reason: str, gap: str) -> Notice:
    return Notice("coverage_gap", {"reason": reason, "gap": gap}, f"{reason}.")


def low_score(best: float, threshold: float) -> Notice:
    params = {"best": f"{best:.3f}", "threshold": f"{threshold:.3f}"}
    return Notice("low_score", params, f"local evidence is weak (best score {best:.3f} < threshold {threshold:.3f}).")


# The web notes say what happened to the web, not what the answer rests on: the verdict says that
# (local passages only, or refused), so a note cannot contradict it.
WEB_NOT_CONFIGURED = Notice("web_not_configured", {}, "web search is not configured.")
FACTS_ANSWER = Notice(
    "facts_answer", {}, "answered from the knowledge base's statement facts, computed without the model."
)
WEB_SKIPPED_FILTER = Notice(
    "web_skipped_filter", {}, "the request's filter restricts the answer to matching local passages."
)


def web_failed(status: str) -> Notice:
    text = f"web search failed ({status})."
    return Notice("web_failed", {"status": status}, text)


def verdict(decision: RouteDecision, for_model: Sequence[Passage], refuse_without_evidence: bool) -> str:
    """The one word the user is told: local, web, no_web or refused (module docstring)."""
    if decision.route == Route.LOCAL:
        return "local"
    if any(p.origin == "web" for p in for_model):
        return "web"
    return "refused" if refuse_without_evidence else "no_web"


def note_text(notices: Sequence[Notice]) -> str:
    return " ".join(n.text for n in notices)
