"""The web page's conversation and task display in headless Chromium: history goes out with the second question
(and not after "New conversation"), the route badge shows the task and the standalone question, stages
appear as they arrive, a calculation and an invalid JSON are shown as such, and a ChartSpec is drawn as
inline SVG (bar, line, pie) with axis labels, unit and legend, also on a 390 px screen.

The gateway is the real uvicorn process; behind it is a scripted OrchestratorService on 127.0.0.1 (a real
gRPC server streaming fixed AskEvents: the edge of the page under test), so what the page must draw is
known exactly and no model is needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.gateway_server import GatewayServer
from fixtures.scripted_orchestrator import (
    ScriptedOrchestrator,
    ScriptItem,
    answer_events,
    scripted_calculation,
    scripted_route,
)
from selenium_page import By, Keys, WebDriverWait, ask, finished_turn, first_answer
from weaverbird.v1 import common_pb2, orchestrator_pb2

pytestmark = [pytest.mark.integration, pytest.mark.browser]

YEARS = ["FY2022", "FY2023", "FY2024"]
BAR_SERIES = {"Northwind": [100.0, 250.0, 175.0], "Qingsong": [80.0, 120.0, 60.0]}
LINE_SERIES = {"revenue": [10.0, 30.0, 20.0, 40.0], "profit": [5.0, 4.0, 8.0, 6.0]}
PIE = {"Acme": 50.0, "Globex": 30.0, "Initech": 20.0}
STAGE_PAUSE_S = 1.5


def chart(kind: str) -> orchestrator_pb2.ChartSpec:
    if kind == "pie":
        series = [orchestrator_pb2.ChartSeries(name="share", values=list(PIE.values()), passages=[1])]
        return orchestrator_pb2.ChartSpec(type="pie", title="Holdings", categories=list(PIE), series=series, unit="%")
    data, categories = (BAR_SERIES, YEARS) if kind == "bar" else (LINE_SERIES, ["Q1", "Q2", "Q3", "Q4"])
    return orchestrator_pb2.ChartSpec(
        type=kind,
        title=f"{kind} chart",
        categories=categories,
        series=[orchestrator_pb2.ChartSeries(name=n, values=v, passages=[1, 2]) for n, v in data.items()],
        x_label="Fiscal year",
        y_label="Revenue",
        unit="USD million",
    )


def script(request: orchestrator_pb2.AskRequest) -> list[ScriptItem]:
    """A chart of the kind the question names, with stages, a calculation and a JSON; else a plain answer.
    A question asked with history is "rewritten" so the page has a standalone question to show."""
    question = request.question
    route = scripted_route(
        standalone_question=f"{question} (standalone)" if request.history else question,
        task=common_pb2.TASK_ANALYSIS if "chart" in question else common_pb2.TASK_LOOKUP,
        task_decided_by="rules",
    )
    kind = next((k for k in ("bar", "line", "pie") if f"{k} chart" in question), None)
    if kind is None:
        return list(answer_events(f"Answer to {question} [1].", route=route))
    stages = [
        orchestrator_pb2.StageEvent(
            stage="plan", round=1, ms=120, sub_questions=["revenue FY2022?", "revenue FY2024?"]
        ),
        orchestrator_pb2.StageEvent(stage="review", round=1, ms=45, passed=False, detail="claim 2 is not cited"),
    ]
    done = orchestrator_pb2.AnswerDone(
        finish_reason="stop",
        model_id="scripted",
        task=common_pb2.TASK_ANALYSIS,
        chart=chart(kind),
        calculation=scripted_calculation(
            [("revenue FY2024", 175, "175.0"), ("revenue FY2022", 100, "100")],
            "(revenue FY2024 - revenue FY2022) / revenue FY2022 * 100",
            (75.0, "%", "75%"),
        ),
        structured=orchestrator_pb2.StructuredAnswer(
            json='{"company": "Northwind", "share": 12.5}', valid=False, missing_keys=["year"]
        ),
    )
    events = answer_events("Revenue rose 75% [1][2].", route=route, stages=stages, done=done)
    if "slowly" in question:
        # A pause after each stage: the page must show a stage before the answer is finished.
        return [events[0], events[1], STAGE_PAUSE_S, events[2], STAGE_PAUSE_S, *events[3:]]
    return list(events)


@pytest.fixture(scope="module")
def orchestrator() -> Iterator[ScriptedOrchestrator]:
    with ScriptedOrchestrator(script) as served:
        yield served


@pytest.fixture(scope="module")
def page_url(orchestrator: ScriptedOrchestrator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("tasks-gateway") / "gateway.log"
    # The ingester is not used by these tests; its address only has to be well formed.
    with GatewayServer(orchestrator.addr, "127.0.0.1:9", log) as server:
        yield server.base_url + "/"


def number(element: Any, name: str) -> float:
    return float(element.get_attribute(name))


def svg_texts(svg: Any) -> list[str]:
    return [t.get_attribute("textContent") for t in svg.find_elements(By.CSS_SELECTOR, "text")]


def test_history_goes_with_the_second_question_and_not_after_a_new_conversation(
    browser: Any, page_url: str, orchestrator: ScriptedOrchestrator
) -> None:
    first = first_answer(browser, page_url, "What was Northwind's revenue in FY2023?")
    assert not orchestrator.requests[-1].history
    assert "standalone" not in first.find_element(By.CSS_SELECTOR, ".route-badge").text  # searched as typed

    ask(browser, "and in FY2024?")
    second = finished_turn(browser, 2)
    sent = orchestrator.requests[-1]
    assert sent.question == "and in FY2024?"
    assert [(t.role, t.text) for t in sent.history] == [
        ("user", "What was Northwind's revenue in FY2023?"),
        ("assistant", "Answer to What was Northwind's revenue in FY2023? [1]."),  # the answer as shown
    ]
    badge = second.find_element(By.CSS_SELECTOR, ".route-badge")
    assert badge.find_element(By.CSS_SELECTOR, ".route-standalone").text == "searched as: “and in FY2024? (standalone)”"
    assert badge.find_element(By.CSS_SELECTOR, ".route-task").text == "task: lookup (by rules)"
    assert "2 earlier questions" in browser.find_element(By.ID, "history-status").text

    # "New conversation" from the keyboard: the page forgets the turns and focus returns to the question.
    button = browser.find_element(By.ID, "new-conversation")
    button.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "question"
    assert not browser.find_elements(By.CSS_SELECTOR, "#conversation .turn")
    ask(browser, "What was Qingsong's revenue?")
    finished_turn(browser, 3)
    assert orchestrator.requests[-1].question == "What was Qingsong's revenue?"
    assert not orchestrator.requests[-1].history


def test_a_bar_chart_is_drawn_from_the_spec_with_axes_unit_and_legend(
    browser: Any, page_url: str, tmp_path: Path
) -> None:
    turn = first_answer(browser, page_url, "Draw a bar chart of revenue")
    svg = turn.find_element(By.CSS_SELECTOR, ".chart-box figure.chart svg")
    assert svg.get_attribute("role") == "img"
    assert turn.find_element(By.CSS_SELECTOR, ".chart figcaption").text == "bar chart"

    bars = svg.find_elements(By.CSS_SELECTOR, "rect.chart-bar")
    assert len(bars) == len(YEARS) * len(BAR_SERIES)
    drawn = {
        (b.find_element(By.XPATH, "..").get_attribute("data-series"), b.get_attribute("data-category")): b for b in bars
    }
    # Heights are proportional to the values (one scale), and bars stand on the same baseline.
    unit_height = number(drawn[("Northwind", "FY2022")], "height") / 100.0
    baselines = set()
    for name, values in BAR_SERIES.items():
        for year, value in zip(YEARS, values, strict=True):
            bar = drawn[(name, year)]
            assert number(bar, "height") == pytest.approx(value * unit_height, rel=0.01), (name, year)
            baselines.add(round(number(bar, "y") + number(bar, "height"), 1))
    assert len(baselines) == 1
    # Series side by side within each year, years left to right.
    xs = [number(drawn[(name, year)], "x") for year in YEARS for name in BAR_SERIES]
    assert xs == sorted(xs)

    texts = svg_texts(svg)
    assert "Fiscal year" in texts and "Revenue (USD million)" in texts  # axis labels, unit on the y axis
    assert set(YEARS) <= set(texts)
    assert "250" in texts  # a y tick at the top of the scale
    legend = [li.text for li in turn.find_elements(By.CSS_SELECTOR, ".chart-legend li")]
    assert legend == list(BAR_SERIES)
    swatches = [
        s.value_of_css_property("background-color") for s in turn.find_elements(By.CSS_SELECTOR, ".chart-swatch")
    ]
    fills = {b.get_attribute("fill") for b in bars}
    assert len(set(swatches)) == len(fills) == 2  # one colour per series, matching the legend

    # The data behind it stays readable as a table (keyboard: Enter opens it).
    summary = turn.find_element(By.CSS_SELECTOR, ".chart-data summary")
    summary.send_keys(Keys.ENTER)
    table = turn.find_element(By.CSS_SELECTOR, ".chart-data table")
    assert table.is_displayed() and "250 USD million" in table.text

    # The rest of the task's answer: stages, calculation with cited figures, JSON marked invalid.
    stages = turn.find_elements(By.CSS_SELECTOR, ".stages > li")
    assert [s.get_attribute("data-stage") for s in stages] == ["plan", "review"]
    assert [q.text for q in stages[0].find_elements(By.CSS_SELECTOR, "li")] == ["revenue FY2022?", "revenue FY2024?"]
    assert "✗ failed · claim 2 is not cited" in stages[1].text
    calc = turn.find_element(By.CSS_SELECTOR, ".calculation")
    assert [a.text for a in calc.find_elements(By.CSS_SELECTOR, ".figures a.cite")] == ["[1]", "[2]"]
    assert (
        "(revenue FY2024 - revenue FY2022) / revenue FY2022 * 100"
        in calc.find_element(By.CSS_SELECTOR, ".formula").text
    )
    assert calc.find_element(By.CSS_SELECTOR, ".result").text == "Result: 75%"  # as the answer shows it
    status = turn.find_element(By.CSS_SELECTOR, ".json-status")
    assert status.get_attribute("data-valid") == "false" and status.text == "invalid: missing keys year"
    assert '"company": "Northwind"' in turn.find_element(By.CSS_SELECTOR, ".structured code").text
    assert turn.find_element(By.CSS_SELECTOR, ".route-task").text == "task: analysis with chart (by rules)"
    browser.save_screenshot(str(tmp_path / "tasks-bar.png"))


def test_line_and_pie_charts_follow_their_values(browser: Any, page_url: str, tmp_path: Path) -> None:
    line = first_answer(browser, page_url, "Show a line chart of revenue and profit").find_element(
        By.CSS_SELECTOR, ".chart svg"
    )
    lines = line.find_elements(By.CSS_SELECTOR, "polyline.chart-line")
    assert len(lines) == len(LINE_SERIES)
    for polyline, values in zip(lines, LINE_SERIES.values(), strict=True):
        points = [tuple(map(float, p.split(","))) for p in polyline.get_attribute("points").split()]
        assert len(points) == len(values)
        assert [x for x, _ in points] == sorted(x for x, _ in points)
        # SVG y grows downwards: a larger value is drawn higher, and on one linear scale.
        scale = (points[0][1] - points[1][1]) / (values[1] - values[0])
        for (_, y), value in zip(points, values, strict=True):
            assert points[0][1] - y == pytest.approx((value - values[0]) * scale, abs=0.5)
    assert "Revenue (USD million)" in svg_texts(line)

    ask(browser, "Make a pie chart of the holdings")
    pie = finished_turn(browser, 2).find_element(By.CSS_SELECTOR, ".chart svg")
    slices = pie.find_elements(By.CSS_SELECTOR, ".chart-slice")
    assert [s.get_attribute("data-category") for s in slices] == list(PIE)
    assert "50%" in svg_texts(pie) and "20%" in svg_texts(pie)
    legend = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#turn-2 .chart-legend li")]
    assert legend == ["Acme: 50%", "Globex: 30%", "Initech: 20%"]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", line)
    browser.save_screenshot(str(tmp_path / "tasks-line.png"))
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", pie)
    browser.save_screenshot(str(tmp_path / "tasks-pie.png"))


def test_stages_show_while_the_answer_is_still_coming(browser: Any, page_url: str) -> None:
    browser.get(page_url)
    ask(browser, "slowly: a bar chart of revenue")
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#turn-1 .stages > li"))
    turn = browser.find_element(By.ID, "turn-1")
    assert turn.get_attribute("data-finished") is None  # shown before the stream ended
    assert "plan" in turn.find_element(By.CSS_SELECTOR, ".progress").text
    finished_turn(browser, 1)
    assert len(turn.find_elements(By.CSS_SELECTOR, ".stages > li")) == 2


def test_the_task_answer_fits_a_390_px_screen(
    browser: Any, page_url: str, tmp_path: Path, assert_accessible: Callable[[Any, str], None]
) -> None:
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
    )
    try:
        turn = first_answer(browser, page_url, "Draw a bar chart of revenue")
        svg = turn.find_element(By.CSS_SELECTOR, ".chart svg")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        viewport = browser.execute_script("return window.innerWidth")
        assert width <= viewport == 390, f"page is {width}px wide on a {viewport}px screen"
        box = browser.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.left, r.right];", svg)
        assert 0 <= box[0] and box[1] <= viewport
        # Drawn for the width it has (text stays legible), not a desktop drawing shrunk.
        assert int(svg.get_attribute("width")) <= box[1] - box[0] + 1
        assert turn.find_element(By.CSS_SELECTOR, ".structured pre").get_attribute("tabindex") == "0"
        # The chart's data table and the JSON scroll sideways here: both reachable from the keyboard.
        turn.find_element(By.CSS_SELECTOR, ".chart-data summary").click()
        assert turn.find_element(By.CSS_SELECTOR, ".chart-data table").get_attribute("tabindex") == "0"
        assert_accessible(browser, "390 px phone, a task answer with chart, calculation and JSON")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", svg)
        browser.save_screenshot(str(tmp_path / "tasks-390.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
