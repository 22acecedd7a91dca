"""CLI rendering of the done event: the numeric check's warning and the refusal line."""

from __future__ import annotations

from weaverbird.v1 import orchestrator_pb2
from weaverbird_cli import render


def _done(**fields: object) -> orchestrator_pb2.AnswerDone:
    return orchestrator_pb2.AnswerDone(finish_reason="stop", completion_tokens=12, model_id="m", **fields)


def test_unsupported_figures_get_a_warning_line_before_done() -> None:
    done = _done(
        answer_check=orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED,
        unsupported_numbers=["USD 5.1 billion", "12.4%"],
        answer_cites_passages=True,
    )
    warning, last = render.done_line(done).split("\n")
    assert warning.startswith("[warning]")
    assert "USD 5.1 billion, 12.4%" in warning and "the passages it cites" in warning
    assert last.startswith("[done] stop · 12 tokens")


def test_an_answer_citing_nothing_is_named_in_the_warning() -> None:
    done = _done(answer_check=orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED, unsupported_numbers=["7"])
    assert "the answer cites none" in render.check_line(done)


def test_supported_or_figure_free_answers_print_no_warning() -> None:
    for check in (orchestrator_pb2.ANSWER_CHECK_SUPPORTED, orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS, 0):
        line = render.done_line(_done(answer_check=check))
        assert "\n" not in line and line.startswith("[done] stop")


def test_a_refusal_says_the_model_was_not_asked() -> None:
    line = render.done_line(orchestrator_pb2.AnswerDone(answer_check=orchestrator_pb2.ANSWER_CHECK_REFUSED))
    assert line.startswith("[done] no relevant evidence") and "tokens" not in line


def test_the_route_line_names_the_prompt_size_once_it_is_known() -> None:
    route = orchestrator_pb2.RouteEvent(route=orchestrator_pb2.ROUTE_LOCAL, top_k=5, top_j=3)
    assert "prompt=" not in render.route_report(route)
    prompt = orchestrator_pb2.PromptEvent(
        prompt_tokens=412, context_tokens=150, context_tokens_full=1180, passages_used=[1, 3]
    )
    assert "prompt=412tok (passages 150 of 1180tok, from [1][3])" in render.route_report(route, prompt)


def test_a_withheld_answer_shows_its_replacement_instead_of_a_warning() -> None:
    done = _done(
        answer_check=orchestrator_pb2.ANSWER_CHECK_UNSUPPORTED,
        unsupported_numbers=["USD 5.1 billion"],
        answer_cites_passages=True,
        replacement_answer="The provided information is insufficient to answer this question.",
    )
    withheld, replacement, last = render.done_line(done).split("\n")
    assert withheld.startswith("[withheld]") and "USD 5.1 billion" in withheld
    assert replacement == done.replacement_answer
    assert last.startswith("[done]")


def test_an_answer_naming_nothing_says_why_it_was_withheld() -> None:
    done = _done(
        answer_check=orchestrator_pb2.ANSWER_CHECK_SUPPORTED,
        replacement_answer="The passages do not say.",
        replacement_reason="names_nothing",
    )
    warning = render.check_line(done)
    assert warning.startswith("[withheld] the answer restated the question")
    assert warning.endswith("The passages do not say.")
    listed = _done(
        answer_check=orchestrator_pb2.ANSWER_CHECK_NO_NUMBERS,
        replacement_answer="The passages do not say.",
        replacement_reason="lists_nothing",
    )
    assert render.check_line(listed).startswith("[withheld] the answer announced a list without naming any")
