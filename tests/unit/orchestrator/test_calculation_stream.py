"""A calculation streams each figure as soon as its line is written and found in its passage, then the
result computed in code; when the calculation fails, the checked lookup answer follows the figures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fixtures.fake_peers import FakePeers, fake_settings, given_params, local_passage
from weaverbird_orchestrator.domain import GenerationDone, Passage, PromptPrepared, Stage, Task
from weaverbird_orchestrator.events import CitationsEvent, DoneEvent, TokenEvent
from weaverbird_orchestrator.flow import QuestionFlow
from weaverbird_orchestrator.tasks.calculation import FigureReader, compute
from weaverbird_orchestrator.tasks.runner import NOT_COMPUTED

PASSAGES = [
    "Revenue: USD 1,284.6 million, up 16.5% from USD 1,102.9 million in fiscal 2023. Gross margin 41.2%.",
    "Cash from operations was USD 1.27 billion.",
]
GOOD = (
    "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,102.9 million [1]\nFormula: (A - B) / B * 100"
)


def _pieces(text: str, size: int = 7) -> list[str]:
    """The output cut as a model streams it: pieces that end mid-line and mid-number."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def _read(output: str) -> list[str]:
    reader = FigureReader(PASSAGES)
    letters = [f.letter for piece in _pieces(output) for f in reader.feed(piece)]
    return letters + [f.letter for f in reader.finish()]


def test_each_figure_comes_out_once_the_next_line_shows_it_is_not_repeated() -> None:
    reader = FigureReader(PASSAGES)
    assert reader.feed("A: revenue 2024 = USD 1,284.6 mil") == []  # the line may still change
    assert reader.feed("lion [1]\nB: revenue") == []  # A is held: B might repeat its figure
    (a,) = reader.feed(" 2023 = USD 1,102.9 million [1]\n")
    assert (a.letter, a.text, a.passage) == ("A", "USD 1,284.6 million", 1)
    assert [f.letter for f in reader.feed("Formula: (A - B) / B * 100")] == []  # the formula line is not done
    assert [f.letter for f in reader.finish()] == ["B"]
    assert reader.text.endswith("Formula: (A - B) / B * 100")


def test_the_reader_stops_where_compute_would_refuse() -> None:
    in_no_passage = (
        "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 999.0 million [1]\nC: x = 41.2% [1]"
    )
    assert _read(in_no_passage) == ["A"]  # A was checked on its own; nothing after B
    # One figure read as two items: one of the labels is wrong, so neither figure is shown.
    one_figure_twice = "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 1,284.6 million [1]"
    assert _read(one_figure_twice) == []
    assert _read("Missing: revenue 2023\nA: revenue 2024 = USD 1,284.6 million [1]") == []
    assert _read("Here are the figures.\n" + GOOD) == ["A", "B"]  # prose is skipped, as parse_output does
    assert _read(GOOD + "\nC: margin = 41.2% [1]") == ["A", "B"]  # nothing after the formula
    assert _read("A: cash = USD 1.27 billion [2]") == ["A"]  # a last line without a newline


def test_streamed_figures_are_the_ones_compute_uses() -> None:
    outcome = compute(GOOD, PASSAGES, "en")
    reader = FigureReader(PASSAGES)
    streamed = [f for piece in _pieces(GOOD, 3) for f in reader.feed(piece)] + reader.finish()
    assert streamed == list(outcome.figures)


class ScriptedPeers(FakePeers):
    """One strong local KB; the model writes `figures` for the figures step and `answer` otherwise."""

    def __init__(self, figures: str, answer: str) -> None:
        hits = [local_passage(n, t, 0.9 - n / 10) for n, t in enumerate(PASSAGES, start=1)]
        super().__init__(hits, _pieces(answer))
        self.figures = figures
        self.calls: list[str] = []
        self.figure_pieces_read = 0
        self.figures_finished = False  # the figures call ran to its done event

    async def generate(
        self, question: str, passages: list[Passage], language: str, temperature: float, max_tokens: int, **kw: Any
    ) -> AsyncIterator[str | PromptPrepared | GenerationDone]:
        task = str(kw.get("task", ""))
        self.calls.append(task)
        if task != "figures":
            async for item in super().generate(question, passages, language, temperature, max_tokens):
                yield item
            return
        yield PromptPrepared(90, 40, 120, tuple(range(1, len(passages) + 1)))
        for piece in _pieces(self.figures):
            self.figure_pieces_read += 1
            yield piece
        yield GenerationDone("stop", 100, 10, "fake-model", cached_tokens=60)
        self.figures_finished = True


async def _ask(
    peers: ScriptedPeers,
    question: str = "How much did revenue grow from 2023 to 2024?",
    *,
    model_calculations: bool = True,
) -> list[object]:
    params = given_params(question, top_k=2, threshold=0.1, task=Task.CALCULATION)
    settings = fake_settings(few_shot_examples=0, model_calculations=model_calculations)
    return [event async for event in QuestionFlow(peers, settings).ask(params)]


def _text(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TokenEvent))


async def test_figures_stream_before_the_result_and_the_answer_reads_as_before() -> None:
    events = await _ask(ScriptedPeers(GOOD, "unused"))
    kinds = [type(e).__name__ for e in events]
    # The figures arrive before the compute stage ends; the result after it.
    assert kinds.index("TokenEvent") < kinds.index("Stage") < len(kinds) - 1 - kinds[::-1].index("TokenEvent")
    assert _text(events) == compute(GOOD, PASSAGES, "en").answer
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"
    assert done.decision.timings.first_token_ms > 0


async def test_with_model_calculations_off_the_passages_stated_figures_answer_and_nothing_is_computed() -> None:
    assert fake_settings().model_calculations is False  # the default
    peers = ScriptedPeers(GOOD, "Revenue was USD 1,284.6 million [1].")
    events = await _ask(peers, model_calculations=False)
    assert peers.calls == [""]  # no figures step: the checked lookup answer is the only model call
    stage = next(e for e in events if isinstance(e, Stage))
    assert stage.stage == "compute" and not stage.passed and stage.detail == NOT_COMPUTED
    assert _text(events) == "Revenue was USD 1,284.6 million [1]."
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"
    assert done.extras.calculation is None


async def test_a_failed_calculation_keeps_its_figures_and_adds_the_checked_answer() -> None:
    no_formula = "A: revenue 2024 = USD 1,284.6 million [1]\nB: cash = USD 1.27 billion [2]\n"
    peers = ScriptedPeers(no_formula, "Revenue grew 16.5% [1].")
    events = await _ask(peers)
    assert peers.calls == ["figures", ""]  # the lookup answer is the second model call
    stage = next(e for e in events if isinstance(e, Stage))
    assert not stage.passed and "formula" in stage.detail
    assert _text(events) == (
        "Figures:\nA (revenue 2024) = USD 1,284.6 million [1]\nB (cash) = USD 1.27 billion [2]\n"
        "\nRevenue grew 16.5% [1]."
    )
    citations = next(e for e in events if isinstance(e, CitationsEvent))
    assert citations.cited == {1, 2}  # [2] is cited only by a figure
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"
    assert (done.generation.prompt_tokens, done.generation.cached_tokens) == (200, 120)  # both calls
    timings = done.decision.timings
    assert 0 < timings.first_token_ms <= timings.generate_ms <= timings.total_ms


async def test_a_withheld_fallback_answer_is_replaced_after_the_figures_shown() -> None:
    no_formula = "A: revenue 2024 = USD 1,284.6 million [1]\n"
    events = await _ask(ScriptedPeers(no_formula, "Revenue grew USD 300 million [1]."))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "unsupported"
    assert done.replacement.startswith("Figures:\nA (revenue 2024) = USD 1,284.6 million [1]\n\n")
    assert done.replacement.endswith("insufficient to answer this question.")
    assert "300" not in _text(events)  # the unsupported figure was never streamed


async def test_a_figure_in_no_passage_stops_the_model_and_the_lookup_starts_at_once() -> None:
    wrong_b = "A: revenue 2024 = USD 1,284.6 million [1]\nB: revenue 2023 = USD 999.0 million [1]\n"
    peers = ScriptedPeers(wrong_b + "C: margin = 41.2% [1]\nFormula: (A - B) / B * 100\n", "Revenue grew 16.5% [1].")
    events = await _ask(peers)
    assert peers.calls == ["figures", ""]
    # The model was stopped right after B's line: nothing after it was read or written.
    assert not peers.figures_finished
    assert peers.figure_pieces_read == len(_pieces(wrong_b))
    stage = next(e for e in events if isinstance(e, Stage))
    assert not stage.passed and stage.detail == "B = USD 999.0 million is in no passage"
    assert _text(events) == "Figures:\nA (revenue 2024) = USD 1,284.6 million [1]\n\nRevenue grew 16.5% [1]."
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer_check == "supported"
    # The stopped call counts what it read (its prompt) and the pieces it wrote, the lookup its done event.
    generation = done.generation
    assert (generation.prompt_tokens, generation.cached_tokens) == (90 + 100, 60)
    assert generation.completion_tokens == len(_pieces(wrong_b)) + len(_pieces("Revenue grew 16.5% [1]."))


async def test_missing_stops_the_model_too() -> None:
    peers = ScriptedPeers("Missing: revenue 2023\nA: revenue 2024 = USD 1,284.6 million [1]\n", "Revenue grew [1].")
    events = await _ask(peers)
    assert not peers.figures_finished and peers.calls == ["figures", ""]
    stage = next(e for e in events if isinstance(e, Stage))
    assert "missing (Missing: revenue 2023)" in stage.detail


async def test_a_question_that_also_asks_why_gets_the_calculation_and_then_the_explanation() -> None:
    peers = ScriptedPeers(GOOD, "Demand for warehouse systems drove the growth [2].")
    events = await _ask(peers, "How much did revenue grow from 2023 to 2024, and what explains the change?")
    assert peers.calls == ["figures", ""]  # the calculation, then a checked answer for the other part
    text = _text(events)
    assert text.startswith(compute(GOOD, PASSAGES, "en").answer)
    assert text.endswith("\n\nDemand for warehouse systems drove the growth [2].")
    citations = next(e for e in events if isinstance(e, CitationsEvent))
    assert citations.cited == {1, 2}  # the figures' passage and the explanation's
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.extras.calculation is not None and done.task is Task.CALCULATION
    assert done.generation.prompt_tokens == 200  # both model calls counted
    # Without the second part, no second call.
    peers = ScriptedPeers(GOOD, "unused")
    await _ask(peers)
    assert peers.calls == ["figures"]
