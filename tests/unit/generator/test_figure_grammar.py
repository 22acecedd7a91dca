"""The answer's numbers limited to the prompt's (figure_grammar.py), and when the servicer asks for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from weaverbird.v1 import generator_pb2
from weaverbird_generator.figure_grammar import figures_from_prompt, numbers_in
from weaverbird_generator.llm_client import Delta
from weaverbird_generator.servicer import GeneratorServicer
from weaverbird_generator.settings import GeneratorSettings


def test_numbers_are_taken_as_written_with_separators_and_decimals() -> None:
    found = numbers_in(["Revenue was USD 1,284.6 million in 2024 [1].", "营业收入为５１．３７亿元，增长8.4%。"])
    assert found == {"1,284.6", "2024", "1", "51.37", "8.4"}


def test_the_grammar_offers_each_number_of_the_prompt_once_longest_first() -> None:
    messages = [{"role": "user", "content": "Revenue 1,284.6 (2023: 1,102.9); margin 1.5%; [1] [1]"}]
    grammar = figures_from_prompt(messages)
    number_rule = next(line for line in grammar.splitlines() if line.startswith("number ::="))
    assert number_rule == 'number ::= "1,102.9" | "1,284.6" | "2023" | "1.5" | "1"'
    # Digits are never free characters: outside `number` the grammar admits none.
    assert grammar.count("[^0-9０-９") == 3 and "[0-9" not in grammar


def test_a_prompt_without_numbers_allows_no_digit() -> None:
    assert figures_from_prompt([{"role": "user", "content": "What drove margins?"}]) == "root ::= [^0-9０-９]*\n"


class GrammarClient:
    """A chat server that records the grammar each request carries."""

    def __init__(self) -> None:
        self.grammars: list[str | None] = []

    async def stream(self, messages: list[dict[str, str]], **kwargs: Any) -> AsyncIterator[Delta]:
        self.grammars.append(kwargs.get("grammar"))
        yield Delta(text="ok")
        yield Delta(finish_reason="stop", prompt_tokens=10, completion_tokens=1)


class Context:
    async def write(self, event: generator_pb2.GenerateEvent) -> None:
        pass

    def time_remaining(self) -> float | None:
        return None


def _request(task: str) -> generator_pb2.GenerateRequest:
    return generator_pb2.GenerateRequest(
        question="What was revenue in 2024?",
        language="en",
        task=task,
        instruction="revenue" if task == "json" else "",
        passages=[generator_pb2.ContextPassage(number=1, title="NW", text="Revenue was USD 5.25 million.", source="")],
    )


async def _grammar(task: str, **settings: Any) -> str | None:
    client = GrammarClient()
    servicer = GeneratorServicer(client, "fake", GeneratorSettings(**settings))  # type: ignore[arg-type]
    await servicer.GenerateStream(_request(task), Context())  # type: ignore[arg-type]
    return client.grammars[0]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({}, True),  # the local llama.cpp server
        ({"endpoint": "http://tgi:8080"}, False),  # TGI and OpenAI-style servers take other grammar forms
        ({"endpoint": "http://llama:8080", "figure_grammar": True}, True),
        ({"figure_grammar": False}, False),
    ],
)
async def test_the_answer_is_constrained_where_the_server_takes_a_grammar(
    settings: dict[str, Any], expected: bool
) -> None:
    grammar = await _grammar("", **settings)
    assert (grammar is not None) is expected
    if grammar is not None:
        assert '"5.25"' in grammar and '"2024"' in grammar


@pytest.mark.parametrize("task", ["figures", "json"])
async def test_task_steps_whose_output_holds_other_numbers_are_not_constrained(task: str) -> None:
    # A formula's constants (x 100, / 2) are in no passage.
    assert await _grammar(task) is None
