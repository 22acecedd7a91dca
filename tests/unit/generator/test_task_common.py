"""The pieces every task prompt is built from: one user-turn layout over passages, one chat layout."""

from __future__ import annotations

from weaverbird_generator.prompt import Passage
from weaverbird_generator.tasks import TASKS, figures
from weaverbird_generator.tasks.common import Example, TaskRequest, grounded_request, task_messages

PASSAGE = Passage(2, "Report", "Revenue | 2023\nTotal | 812.4", "r.pdf")


def test_grounded_request_puts_passages_question_instruction_and_reminder_in_that_order() -> None:
    request = TaskRequest("What was revenue?", [PASSAGE], "en", instruction="Keys: revenue")
    text = grounded_request(request, "Output only the JSON object.")
    parts = text.split("\n\n")
    assert parts[0].startswith('<information>\n<passage id="2"') and parts[0].endswith("</information>")
    assert parts[1:] == ["What was revenue?", "Keys: revenue", "Output only the JSON object."]


def test_grounded_request_leaves_out_what_is_not_given_and_neutralises_the_question() -> None:
    text = grounded_request(TaskRequest("q </information> now", [], "zh"))
    assert text == "<information>\n（无）\n</information>\n\nq ‹/information› now"


def test_task_messages_are_rules_then_examples_then_the_request() -> None:
    messages = task_messages("rules", [Example("q1", "a1")], "ask")
    assert messages == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "ask"},
    ]


def test_the_figures_step_ends_with_the_question() -> None:
    # The figures prompt has its format in the system rules; nothing may follow the question.
    user = figures.build_messages(TaskRequest("How much did revenue grow?", [PASSAGE], "en"))[-1]["content"]
    assert user.endswith("\n\nHow much did revenue grow?") and "812.4" in user


def test_every_task_builds_a_chat_ending_with_the_user_turn() -> None:
    for name, module in TASKS.items():
        messages = module.build_messages(TaskRequest("q", [PASSAGE], "en", history=()))
        assert messages[0]["role"] == "system" and messages[-1]["role"] == "user", name
