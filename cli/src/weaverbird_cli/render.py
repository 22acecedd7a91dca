"""Terminal rendering of answers: route report, citations, further reading."""

from __future__ import annotations

from collections.abc import Sequence

from weaverbird.v1 import common_pb2, orchestrator_pb2

_ROUTE = {orchestrator_pb2.ROUTE_LOCAL: "local", orchestrator_pb2.ROUTE_WEB: "web"}


def route_report(route: orchestrator_pb2.RouteEvent, prompt: orchestrator_pb2.PromptEvent | None = None) -> str:
    t = route.timings
    parts = [
        f"route={_ROUTE.get(route.route, '?')}",
        f"best_local_score={route.best_local_score:.3f}",
        f"threshold={route.threshold:.3f}",
        f"K={route.top_k} J={route.top_j}",
        f"web={route.web_status}",
        f"embed={t.embed_ms:.1f}ms search={t.local_search_ms:.1f}ms",
    ]
    filters = {f.name: v for f, v in route.filter.ListFields()}
    if filters:
        parts.append(f"filter={filters}")
    if prompt is not None:
        # What the model reads: on a CPU this, not retrieval, is the wait for the first token.
        parts.append(
            f"prompt={prompt.prompt_tokens}tok (passages {prompt.context_tokens} of "
            f"{prompt.context_tokens_full}tok, from {_numbers(prompt.passages_used)})"
        )
    line = "[route] " + " ".join(parts)
    return line + (f"\n[note] {route.note}" if route.note else "")


def _numbers(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in numbers) or "none"


def citation_line(c: orchestrator_pb2.Citation) -> str:
    where = c.source + (f", page {c.page}" if c.page else "")
    origin = "web" if c.origin == common_pb2.ORIGIN_WEB else "local"
    mark = "*" if c.cited_in_answer else " "
    return f" {mark}[{c.number}] {c.title} — {where} ({origin}, score {c.score:.3f})"


def check_line(done: orchestrator_pb2.AnswerDone) -> str:
    """What became of an answer with figures no cited passage holds; "" when there is none.

    Withheld (the default policy): the stream stopped before the figures, and the replacement is shown.
    Otherwise the figures were streamed, so the user is told to check them."""
    if done.answer_check != orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED:
        return ""
    where = "the passages it cites" if done.answer_cites_passages else "any passage (the answer cites none)"
    figures = ", ".join(done.unsupported_numbers)
    if done.replacement_answer:
        return f"[withheld] the answer's figures ({figures}) are not in {where}.\n{done.replacement_answer}"
    return f"[warning] the answer states figures not found in {where}: {figures}. Check them before use."


def done_line(done: orchestrator_pb2.AnswerDone) -> str:
    """The closing line, after the check warning if any (the streamed answer cannot be taken back)."""
    t = done.timings
    if done.answer_check == orchestrator_pb2.ANSWER_CHECK_REFUSED:
        line = f"[done] no relevant evidence found, the model was not asked · total {t.total_ms:.0f}ms"
    else:
        line = (
            f"[done] {done.finish_reason} · {done.completion_tokens} tokens · model {done.model_id} · "
            f"prompt {done.prompt_tokens} tokens ({done.cached_tokens} cached) · "
            f"first token {t.first_token_ms:.0f}ms · total {t.total_ms:.0f}ms"
        )
    warning = check_line(done)
    return f"{warning}\n{line}" if warning else line
