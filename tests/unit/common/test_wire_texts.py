"""The refusal sentence is defined once and reads the same from the generator's prompt and the
orchestrator's own refusals."""

from __future__ import annotations

from typing import Literal

import pytest
from weaverbird_common.wire_texts import INSUFFICIENT, insufficient, says_insufficient
from weaverbird_generator.prompt import build_messages


def test_each_language_has_its_sentence_and_others_fall_back_to_english() -> None:
    assert insufficient("zh") == "根据所提供的资料，无法回答该问题。"
    assert insufficient("en") == INSUFFICIENT["en"]
    assert insufficient("fr") == INSUFFICIENT["en"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_generator_prompt_names_the_shared_sentence(language: Literal["en", "zh"]) -> None:
    system = build_messages("q", [], language)[0]["content"]
    assert INSUFFICIENT[language] in system


def test_a_refusal_is_recognised_with_or_without_its_final_stop() -> None:
    assert says_insufficient("Sorry. " + INSUFFICIENT["en"].rstrip(".") + " Revenue is not given.")
    assert says_insufficient(INSUFFICIENT["zh"])
    assert not says_insufficient("Revenue was USD 1,284.6 million [1].")
