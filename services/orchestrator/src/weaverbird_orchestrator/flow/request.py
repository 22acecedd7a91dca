"""A request read into AskParams: validated, deployment defaults filled in, a follow-up made standalone,
the task decided and the company / year / quarter filters read from the question."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from weaverbird_common.errors import InvalidArgument
from weaverbird_common.questions import detect_language, filters_from_question

from weaverbird_orchestrator.catalog import CatalogCache
from weaverbird_orchestrator.cross_names import CrossLanguageNames
from weaverbird_orchestrator.domain import AskParams, Task, Turn
from weaverbird_orchestrator.flow.ports import Peers
from weaverbird_orchestrator.settings import OrchestratorSettings
from weaverbird_orchestrator.tasks.followup import standalone_question
from weaverbird_orchestrator.tasks.router import asks_for_chart, classify, llm_choice
from weaverbird_orchestrator.tasks.runner import sub_question_params
from weaverbird_orchestrator.thresholds import threshold_for


class RequestReader:
    """Turns what a caller asked into the parameters the flow runs with."""

    def __init__(self, peers: Peers, settings: OrchestratorSettings, catalog: CatalogCache) -> None:
        self._peers = peers
        self._s = settings
        self._catalog = catalog
        self._default_threshold = settings.threshold
        self._cross_names = CrossLanguageNames(peers)

    async def default_threshold(self) -> float:
        """Deployment c: configured, or calibrated for the embedder's model (asked once)."""
        if self._default_threshold is None:
            self._default_threshold = threshold_for(await self._peers.embedder_model())
        return self._default_threshold

    async def params(
        self,
        question: str,
        *,
        top_k: int | None = None,
        top_j: int | None = None,
        threshold: float | None = None,
        filters: Mapping[str, str | int] | None = None,
        temperature: float = 0.0,
        max_tokens: int = 0,
        conversation_id: str = "",
        history: Sequence[Turn] = (),
        task: Task | None = None,
        json_keys: Sequence[str] = (),
        max_rounds: int | None = None,
        chart: bool | None = None,
        facts: bool | None = None,
    ) -> AskParams:
        """Validates a request and fills in deployment defaults. Raises InvalidArgument.

        A follow-up (history given) is rewritten into a standalone question first, and the task is
        decided from that question unless the request names one."""
        question = question.strip()
        if not question:
            raise InvalidArgument("question must not be empty")
        if len(question) > self._s.max_question_chars:
            raise InvalidArgument(f"question has {len(question)} characters; the limit is {self._s.max_question_chars}")
        k = top_k or self._s.top_k
        if not 1 <= k <= self._s.max_top_k:
            raise InvalidArgument(f"top_k must be between 1 and {self._s.max_top_k}, got {k}")
        j = top_j or min(self._s.top_j, k)
        if not 1 <= j <= k:
            raise InvalidArgument(f"top_j must be between 1 and top_k ({k}), got {j}")
        c = await self.default_threshold() if threshold is None else threshold
        if math.isnan(c) or not -1.0 <= c <= 1.0:
            raise InvalidArgument(f"threshold must be a cosine in [-1, 1], got {c}")
        if not 0.0 <= temperature <= 2.0:
            raise InvalidArgument(f"temperature must be in [0, 2], got {temperature}")
        if max_tokens < 0:
            raise InvalidArgument("max_tokens must not be negative")
        asked = question
        if history:
            question = await self._standalone(question, history)
        chosen_task, decided_by = (task, "request") if task is not None else await self._decide_task(question)
        extracted = not filters
        chosen = dict(filters) if filters else await self.filters_from_question(question)
        return AskParams(
            question=question,
            top_k=k,
            top_j=j,
            threshold=c,
            filters=chosen,
            filters_from_question=extracted,
            language=detect_language(question),
            temperature=temperature,
            max_tokens=min(max_tokens or self._s.max_answer_tokens, self._s.max_answer_tokens),
            conversation_id=conversation_id,
            history=tuple(history),
            asked=asked,
            task=chosen_task,
            task_decided_by=decided_by,
            json_keys=tuple(json_keys),
            max_rounds=self._s.peer_max_rounds if max_rounds is None else max_rounds,
            chart=asks_for_chart(question) if chart is None else chart,
            facts=self._s.facts_answers if facts is None else facts,
        )

    async def sub_params(self, params: AskParams, question: str) -> AskParams:
        """A sub-question of an analysis, with its own filters when the parent's came from its wording."""
        filters = await self.filters_from_question(question) if params.filters_from_question else params.filters
        return sub_question_params(params, question, dict(filters))

    async def _standalone(self, question: str, history: Sequence[Turn]) -> str:
        """The follow-up as a question that stands alone (tasks/followup.py), for retrieval and the model."""
        catalog = await self._catalog.get()
        known = [*catalog.companies, *self._s.known_companies]
        return await standalone_question(
            question,
            history,
            mode=self._s.followup_rewrite,
            generator=self._peers,
            known_companies=known,
            aliases=catalog.aliases,
        )

    async def _decide_task(self, question: str) -> tuple[Task, str]:
        """The question's task and what decided it (tasks/router.py)."""
        if self._s.task_routing == "off":
            return Task.LOOKUP, "off"
        if self._s.task_routing == "llm":
            choice = await llm_choice(self._peers, question, detect_language(question))
            return choice.task, choice.decided_by
        return classify(question).task, "rules"

    async def filters_from_question(self, question: str) -> dict[str, str | int]:
        """Company / year / quarter named in the question, companies matched against the KB's catalog
        (names and aliases its documents use) plus any the deployment lists."""
        catalog = await self._catalog.get()
        known = [*catalog.companies, *self._s.known_companies]
        found = filters_from_question(question, known, aliases=catalog.aliases)
        if "company" not in found and self._s.cross_language_names and catalog.companies:
            # "亚马逊" for AMAZON's 10-K: the company's name in the other language (cross_names.py).
            language = detect_language(question)
            if company := await self._cross_names.company(question, language, catalog.companies, catalog.aliases):
                found["company"] = company
        return found
