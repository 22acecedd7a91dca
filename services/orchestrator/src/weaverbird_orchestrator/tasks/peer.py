"""PEER (plan, execute, express, review) for analytical questions, bounded in rounds, tokens and time.

Round 1: plan (the model's sub-questions, task "plan"; skipped for a single lookup), execute (the
question and each sub-question through `retrieve`, the flow's own retrieval and local/web gate), express
(one cited answer over the merged passages, task "answer"), review (tasks/review_criteria.py in code,
optionally the model's verdict too). A failed review goes round again while rounds and budget allow:
re-plan first when evidence is missing (a refusal, or a sub-question left uncovered whose retrieval found
nothing), then re-express with what failed spelled out. The best draft is kept (_Draft.rank), so a worse
second draft never replaces a better first one: asked to "also answer" a sub-question whose passages
lacked the fact, the model once invented a figure for it.

The express step reads the sub-questions as part of the question: the generator keeps, from each
passage, what shares terms with the question (its context focus), so a sub-question's metric must be in
the question for its rows to reach the model. The review's fixes travel the same way (the answer task
takes no instruction). They go inline, in brackets after the question: on three invented questions with
Qwen2.5-Coder-1.5B, a bulleted outline made it answer in bullets citing 3 of 8 claims; inline, 8 of 10.

Each finished stage is yielded as a domain.Stage; the last item is the PeerOutcome. Bad model output
never raises: an unusable plan means the question is looked up as asked, any draft is reviewed.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

from weaverbird_orchestrator.citations import cited_numbers
from weaverbird_orchestrator.domain import Example, Passage, Retrieval, Route, Stage
from weaverbird_orchestrator.tasks.llm import Completion, Generator, complete
from weaverbird_orchestrator.tasks.peer_plan import needs_plan, parse_plan
from weaverbird_orchestrator.tasks.review_criteria import ANSWERED, CITED, MODEL, SUPPORTED, Review, describe, review

Retrieve = Callable[[str], Awaitable[Retrieval]]

_MARKUP = re.compile(r"[*#>`_]")
MIN_ROUND_TOKENS = 64  # below this a re-expressed answer would be cut off mid-sentence
_MODEL_REVIEW_TOKENS = 60


@dataclass(frozen=True)
class PeerBudget:
    """What one analysis may spend beyond its first round: generated tokens across all its model calls,
    and seconds from its start. A further round starts only if both allow it."""

    max_completion_tokens: int = 1500
    max_seconds: float = 240.0


@dataclass
class PeerOutcome:
    answer: str
    passages: list[Passage]  # what the answer's [n] number, 1-based
    cited: set[int]
    rounds: int
    review_passed: bool
    failed_criteria: list[str]
    completion_tokens: int
    sub_questions: tuple[str, ...] = ()
    stopped: str = ""  # why the loop stopped with a failed review: "max rounds", "token budget", ...


@dataclass(frozen=True)
class _Draft:
    answer: str
    passages: list[Passage]
    review: Review
    round: int

    def rank(self) -> tuple[bool, ...]:
        """Higher is better: passed; then by the worst fault first (a figure in no passage is the costliest
        error, then an unanswered question, then a missing citation); then the earlier draft, written
        before any pressure to fill a gap."""
        failed = self.review.failed
        return (self.review.passed, *(c not in failed for c in (SUPPORTED, ANSWERED, CITED, MODEL)), -self.round)


# Inline after the question (module docstring: a bulleted outline lost the citations).
_OUTLINE = {
    "en": " (Cover: {questions} Cite a passage number after each sentence.)",
    "zh": "（需涵盖：{questions}每句话后标注资料编号。）",
}
_FIX_HEAD = {"en": " Fix your last draft: {fixes}", "zh": "请修改上一稿：{fixes}"}
_FIXES = {
    "en": {
        CITED: "End every sentence with the number of the passage it uses, like [1]; cite only the passages given.",
        SUPPORTED: "These figures are in no passage you cited: {figures}. Copy figures exactly as a passage writes "
        "them and cite that passage.",
        "refused": "Some passages do hold facts the question needs: state them, each with its citation.",
        "uncovered": "Also answer from the passages, or say they do not state it: {questions}",
        MODEL: "A reviewer said: {note}",
    },
    "zh": {
        CITED: "每句话末尾用方括号标注所依据的资料编号，例如[1]；只引用给出的资料。",
        SUPPORTED: "以下数字不在你引用的资料中：{figures}。数字必须与资料原文一致，并引用该资料。",
        "refused": "部分资料包含问题所需的事实：请写出这些事实，并分别标注引用。",
        "uncovered": "还要根据资料回答（资料未写明的请说明）：{questions}",
        MODEL: "审查意见：{note}",
    },
}
_REPLAN = {  # the plan task's instruction when a round found no evidence
    "en": "Nothing was found for: {questions}. Ask for other facts that answer the question.",
    "zh": "以下子问题没有找到资料：{questions}。请换成能回答原问题的其他事实。",
}


def merge(groups: Sequence[Sequence[Passage]], limit: int) -> list[Passage]:
    """One list from each query's ranked passages: duplicates (same id) dropped, at most `limit` kept,
    taken by rank across the queries (every query's best first) and shown in query order."""
    first: dict[str, tuple[int, int, Passage]] = {}
    for g, group in enumerate(groups):
        for r, p in enumerate(group):
            first.setdefault(p.id, (g, r, p))
    chosen: set[str] = set()
    for r in range(max((len(g) for g in groups), default=0)):
        for group in groups:
            if r < len(group) and len(chosen) < limit:
                chosen.add(group[r].id)
    return [p for _, _, p in sorted((v for k, v in first.items() if k in chosen), key=lambda v: v[:2])]


def has_evidence(retrieval: Retrieval, keep_weak_local: bool = False) -> bool:
    """The flow's gate, as for the question itself: weak local passages with nothing from the web are
    no evidence (unless the deployment answers from them anyway)."""
    context = retrieval.for_model()
    if not context:
        return False
    weak = retrieval.decision.route == Route.WEB and not any(p.origin == "web" for p in context)
    return keep_weak_local or not weak


def express_question(question: str, sub_questions: Sequence[str], fixes: Sequence[str], language: str) -> str:
    """What the answer step is asked: the question, its sub-questions as an outline, then any fixes."""
    lang = language if language in _OUTLINE else "en"
    join = "" if lang == "zh" else " "
    text = question
    if sub_questions:
        text += _OUTLINE[lang].format(questions=join.join(sub_questions))
    if fixes:
        text += _FIX_HEAD[lang].format(fixes=join.join(fixes))
    return text


def fix_notes(result: Review, language: str) -> list[str]:
    """The review's failures as instructions for the next draft."""
    words = _FIXES.get(language, _FIXES["en"])
    notes = []
    if result.uncited or result.bad_markers:
        notes.append(words[CITED])
    if result.unsupported:
        notes.append(words[SUPPORTED].format(figures=", ".join(result.unsupported)))
    if result.refused:
        notes.append(words["refused"])
    if result.uncovered:
        notes.append(words["uncovered"].format(questions=" ".join(result.uncovered)))
    notes.extend(words[MODEL].format(note=n) for n in result.notes)
    return notes


def model_verdict(text: str) -> tuple[bool | None, str]:
    """(passed, reason) from the review task's reply; None when it is neither PASS nor FAIL."""
    head = _MARKUP.sub("", text).strip()
    upper = head.upper()
    if upper.startswith("PASS"):
        return True, ""
    if upper.startswith("FAIL"):
        reason = head[4:].lstrip(" :：-—").strip().splitlines()
        return False, (reason[0][:200] if reason else "")
    return None, ""


class _Meter:
    """Completion tokens and seconds spent, against the budget."""

    def __init__(self, budget: PeerBudget, clock: Callable[[], float]) -> None:
        self.budget = budget
        self.clock = clock
        self.start = clock()
        self.tokens = 0

    def add(self, completion: Completion) -> Completion:
        self.tokens += completion.done.completion_tokens
        return completion

    def elapsed(self) -> float:
        return self.clock() - self.start

    def remaining_tokens(self) -> int:
        return self.budget.max_completion_tokens - self.tokens

    def stop_reason(self, next_call_s: float = 0.0, tokens_needed: int = MIN_ROUND_TOKENS) -> str:
        """Why no further model call should start ("" = it may)."""
        if self.remaining_tokens() < tokens_needed:
            return f"token budget ({self.tokens} of {self.budget.max_completion_tokens} spent)"
        if self.elapsed() + next_call_s > self.budget.max_seconds:
            return f"time budget ({self.elapsed():.0f} s of {self.budget.max_seconds:.0f} s spent)"
        return ""


def _ms(clock: Callable[[], float], since: float) -> float:
    return (clock() - since) * 1000.0


async def run_peer(
    question: str,
    language: str,
    *,
    retrieve: Retrieve,
    generator: Generator,
    max_rounds: int,
    budget: PeerBudget,
    examples: Sequence[Example] = (),
    retrieved: Retrieval | None = None,
    max_sub_questions: int = 3,
    max_passages: int = 8,
    max_tokens: int = 0,
    model_review: bool = False,
    keep_weak_local: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> AsyncIterator[Stage | PeerOutcome]:
    """Yields each finished Stage, then the PeerOutcome (see the module docstring).

    `retrieved`: the question's own retrieval when the caller already ran it (it is not repeated).
    `examples`: worked plans for the plan step (question -> one sub-question per line).
    `max_rounds` 0: a single pass (one retrieval, one answer, no plan and no review).
    `max_tokens`: the answer's token ceiling (0 = the generator's).
    """
    meter = _Meter(budget, clock)
    found: dict[str, list[Passage]] = {}  # query -> its passages for the model ([] = no evidence)
    order: list[str] = []

    async def execute(query: str, round_: int) -> Stage:
        step = clock()
        if query == question and retrieved is not None:
            retrieval = retrieved
        else:
            retrieval = await retrieve(query)
        usable = has_evidence(retrieval, keep_weak_local)
        found[query] = retrieval.for_model() if usable else []
        order.append(query)
        d = retrieval.decision
        if usable:
            detail = f"{d.route.value}: {len(found[query])} passages, best score {d.best_local_score:.3f}"
        else:
            detail = "no evidence: " + (d.note or f"best score {d.best_local_score:.3f} under the threshold")
        return Stage("execute", round_, _ms(clock, step), detail, (query,), usable)

    async def plan(round_: int, instruction: str = "") -> tuple[Stage, tuple[str, ...]]:
        step = clock()
        reply = meter.add(
            await complete(generator, "plan", question, (), language, examples=examples, instruction=instruction)
        )
        subs = tuple(q for q in parse_plan(reply.text, question, max_sub_questions) if q not in found)
        detail = f"{len(subs)} sub-questions" if subs else "no usable sub-question; the question is looked up as asked"
        return Stage("plan", round_, _ms(clock, step), detail, subs, bool(subs)), subs

    # Round 1: plan and execute.
    sub_questions: tuple[str, ...] = ()
    if max_rounds > 0 and needs_plan(question):
        stage, sub_questions = await plan(1)
        yield stage
    elif max_rounds > 0:
        yield Stage("plan", 1, 0.0, "skipped: a single lookup", (question,), True)
    for query in (question, *sub_questions):
        yield await execute(query, 1)

    best: _Draft | None = None
    fixes: list[str] = []
    stopped = ""
    rounds = 0
    last_round_s = 0.0
    for round_ in range(1, max(max_rounds, 1) + 1):
        rounds = round_
        round_start = clock()
        passages = merge([found[q] for q in order], max_passages)
        cap = max_tokens if round_ == 1 else min(max_tokens or meter.remaining_tokens(), meter.remaining_tokens())
        step = clock()
        asked = express_question(question, sub_questions, fixes, language)
        draft = meter.add(await complete(generator, "answer", asked, passages, language, max_tokens=cap))
        yield Stage(
            "express",
            round_,
            _ms(clock, step),
            f"{len(passages)} passages, {draft.done.completion_tokens} tokens",
            sub_questions,
            True,
        )
        if max_rounds <= 0:
            # A single pass: the caller's own checks (numeric check) apply; no review here.
            cited = {n for n in cited_numbers(draft.text) if 1 <= n <= len(passages)}
            yield PeerOutcome(draft.text, passages, cited, 1, False, [], meter.tokens, sub_questions, "single pass")
            return

        step = clock()
        result = review(draft.text, passages, sub_questions or (question,))
        if model_review and not meter.stop_reason(tokens_needed=_MODEL_REVIEW_TOKENS):
            verdict = meter.add(
                await complete(generator, "review", question, passages, language, instruction=result.answer)
            )
            passed, reason = model_verdict(verdict.text)
            if passed is False:
                result = dataclasses.replace(
                    result, failed=(*result.failed, MODEL), notes=(reason or "the draft does not hold up",)
                )
        current = _Draft(result.answer, passages, result, round_)
        if best is None or current.rank() > best.rank():
            best = current
        last_round_s = clock() - round_start
        if not result.passed:
            if round_ >= max_rounds:
                stopped = "max rounds"
            else:
                stopped = meter.stop_reason(next_call_s=last_round_s)
        detail = describe(result) + (f"; stopping: {stopped}" if stopped and not result.passed else "")
        yield Stage("review", round_, _ms(clock, step), detail, sub_questions, result.passed)
        if result.passed or stopped:
            break

        # Going round again: new evidence first when it is missing, then the fixes.
        empty = [q for q in result.uncovered if not found.get(q)]
        if (result.refused or empty) and not meter.stop_reason(next_call_s=last_round_s):
            missing = empty or [q for q in order if not found[q]] or list(sub_questions) or [question]
            lang = language if language in _REPLAN else "en"
            stage, more = await plan(round_ + 1, _REPLAN[lang].format(questions=" ".join(missing)))
            yield stage
            for query in more:
                yield await execute(query, round_ + 1)
            sub_questions = tuple(q for q in sub_questions if found.get(q)) + more
        # "Also answer" only what some passage can answer; the rest would invite a made-up answer.
        answerable = tuple(q for q in result.uncovered if found.get(q))
        fixes = fix_notes(dataclasses.replace(result, uncovered=answerable), language)

    assert best is not None
    cited = {n for n in cited_numbers(best.answer) if 1 <= n <= len(best.passages)}
    yield PeerOutcome(
        answer=best.answer,
        passages=best.passages,
        cited=cited,
        rounds=rounds,
        review_passed=best.review.passed,
        failed_criteria=list(best.review.failed),
        completion_tokens=meter.tokens,
        sub_questions=sub_questions,
        stopped="" if best.review.passed else stopped,
    )


__all__ = ["ANSWERED", "CITED", "MODEL", "SUPPORTED", "PeerBudget", "PeerOutcome", "merge", "run_peer"]
