"""Selenium's page API for the browser tests, imported from here so the guard is written once (a test module
importing it is skipped where selenium is not installed, except in CI, where the browser tests must run),
and the two moves every page test makes: ask a question, wait for its answer card."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

try:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise  # in CI the browser test must run
    pytest.skip("selenium is not installed: pip install -r requirements/browser.txt", allow_module_level=True)

__all__ = ["Accessible", "By", "Keys", "WebDriverWait", "ask", "finished_turn", "first_answer"]

Accessible = Callable[[Any, str], None]  # the assert_accessible fixture (conftest.py)


def ask(driver: Any, question: str) -> None:
    """Types `question` into the page's question box and sends it."""
    driver.find_element(By.ID, "question").send_keys(question + Keys.ENTER)


def finished_turn(driver: Any, number: int, timeout_s: float = 60) -> Any:
    """Answer card `number` once its stream has ended without an error."""
    WebDriverWait(driver, timeout_s).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f'#turn-{number}[data-finished="true"]')
    )
    turn = driver.find_element(By.ID, f"turn-{number}")
    error = turn.find_element(By.CSS_SELECTOR, ".error")
    assert not error.is_displayed(), error.text
    return turn


def first_answer(driver: Any, url: str, question: str) -> Any:
    """Opens the page at `url`, asks `question` and returns its finished answer card (turn 1)."""
    driver.get(url)
    ask(driver, question)
    return finished_turn(driver, 1)
