"""What a reader of the web page gets, in headless Chromium: each new answer is followed into view while it
streams (desktop and a 390 px phone) and the focus stays in the question box; the 中文 UI says everything
in Chinese (verdict badge, stages, task source, "show passage", score, server notices rendered from their
codes, English text kept for codes the page does not know); /docs works with no internet (Swagger UI served
by the gateway) and the page has a favicon; axe-core finds no serious or critical violation and no
region / heading-order / scrollable-region-focusable in any tested state; deleting asks for an admin token
on a 401/403, sends it as a Bearer token, and keeps it out of storage.

The gateway is the real uvicorn process. Behind it are scripted OrchestratorService and IngesterService
servers on 127.0.0.1 (real gRPC, fixed replies: the edge of the page under test), so what the page must
draw is known exactly and no model is needed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import httpx
import pytest
from fixtures.gateway_server import GatewayServer
from fixtures.scripted_orchestrator import ScriptedOrchestrator, ScriptItem, answer_events, scripted_route
from selenium_page import Accessible, By, Keys, WebDriverWait, ask, finished_turn, first_answer
from weaverbird.v1 import common_pb2, ingester_pb2, ingester_pb2_grpc, orchestrator_pb2, retriever_pb2

pytestmark = [pytest.mark.integration, pytest.mark.browser]

ADMIN_TOKEN = "admin-secret-for-the-page-test"
WEB_TOKEN = "web-token-ask-and-add"
# A long answer: the page must scroll to keep its end in sight. "MIDWAY" is where the stream pauses.
LONG = " ".join(f"Sentence {i} about revenue and margins in fiscal 2024 [1]." for i in range(40))
PAUSE_S = 2.0


def chinese_route() -> orchestrator_pb2.RouteEvent:
    """Web search off, a coverage gap decided the route: verdict no_web, no score comparison, coded notes."""
    return scripted_route(
        route=orchestrator_pb2.ROUTE_WEB,
        best_local_score=0.269,
        threshold=0.103,
        web_status="not_configured",
        task=common_pb2.TASK_LOOKUP,
        task_decided_by="rules",
        route_reason="period",
        verdict="no_web",
        score_decided=False,
        note="the knowledge base has no Northwind Robotics document for 2031. web search is not configured, "
        "so the answer uses local passages only. a note this page cannot read.",
        notices=[
            orchestrator_pb2.Notice(
                code="coverage_gap",
                params={"reason": "the knowledge base has no Northwind Robotics document for 2031", "gap": "period"},
                text="the knowledge base has no Northwind Robotics document for 2031.",
            ),
            orchestrator_pb2.Notice(code="web_not_configured", text="web search is not configured."),
            orchestrator_pb2.Notice(code="some_future_code", text="a note this page cannot read."),
        ],
    )


def script(request: orchestrator_pb2.AskRequest) -> list[ScriptItem]:
    question = request.question
    if "2031" in question:
        stages = [orchestrator_pb2.StageEvent(stage="plan", round=1, ms=3, detail="skipped: a single lookup")]
        return list(answer_events("资料不足 [1]。", route=chinese_route(), stages=stages))
    if "legacy" in question:
        # What an older orchestrator sends: no verdict, no codes, only the English note.
        old = scripted_route(note="passages for Northwind Robotics, 2023 were weak; searched without filters.")
        return list(answer_events("Old answer [1].", route=old))
    events = answer_events(LONG if "long" in question else f"Answer to {question} [1].")
    if "slowly" not in question:
        return list(events)
    # The route, the first half of the tokens, a pause (the test looks while the stream is open), the rest.
    tokens = [i for i, e in enumerate(events) if e.WhichOneof("event") == "token"]
    middle = tokens[len(tokens) // 2]
    return [*events[:middle], PAUSE_S, *events[middle:]]


class ScriptedIngester(ingester_pb2_grpc.IngesterServiceServicer):
    """Two documents to list; DeleteDocument only for `Bearer ADMIN_TOKEN` (no token: UNAUTHENTICATED, another
    token: PERMISSION_DENIED, as the real ingester answers a non-admin). Records each delete's credential."""

    def __init__(self) -> None:
        self.documents = {f"doc-{n}": f"Saved page {n}" for n in (1, 2)}
        self.delete_credentials: list[str | None] = []
        self._lock = threading.Lock()

    def ListDocuments(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self._lock:
            docs = [
                retriever_pb2.DocumentSummary(
                    document_id=doc_id,
                    title=title,
                    source=f"https://example.com/{doc_id}.html",
                    language="en",
                    company="Northwind Robotics",
                    chunks=3,
                    provenance=retriever_pb2.DocumentProvenance(origin=retriever_pb2.DOCUMENT_ORIGIN_USER),
                )
                for doc_id, title in self.documents.items()
            ]
        return ingester_pb2.IngesterServiceListDocumentsResponse(documents=docs, total_size=len(docs))

    def DeleteDocument(self, request: Any, context: grpc.ServicerContext) -> Any:
        credential = dict(context.invocation_metadata()).get("authorization")
        with self._lock:
            self.delete_credentials.append(credential)
        if credential is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "credentials required")
        if credential != f"Bearer {ADMIN_TOKEN}":
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "deleting documents needs the admin role")
        with self._lock:
            self.documents.pop(request.document_id, None)
        return ingester_pb2.IngesterServiceDeleteDocumentResponse(document_id=request.document_id, deleted_chunks=3)


@pytest.fixture(scope="module")
def ingester() -> Iterator[ScriptedIngester]:
    servicer = ScriptedIngester()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    ingester_pb2_grpc.add_IngesterServiceServicer_to_server(servicer, server)
    servicer.addr = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"  # type: ignore[attr-defined]
    server.start()
    try:
        yield servicer
    finally:
        server.stop(grace=None)


@pytest.fixture(scope="module")
def gateway(ingester: ScriptedIngester, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("page-quality-gateway") / "gateway.log"
    # The local web token may ask and add; the gateway never sends it with a delete.
    with (
        ScriptedOrchestrator(script) as orchestrator,
        GatewayServer(
            orchestrator.addr,
            ingester.addr,
            log,
            env={"GATEWAY_DEFAULT_TOKEN": WEB_TOKEN},  # type: ignore[attr-defined]
        ) as server,
    ):
        yield server.base_url


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
    )
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture
def short_window(browser: Any) -> Iterator[Any]:
    """A desktop window short enough that two answers do not fit."""
    size = browser.get_window_size()
    browser.set_window_size(1280, 800)
    try:
        yield browser
    finally:
        browser.set_window_size(size["width"], size["height"])


def visible_area(driver: Any) -> tuple[float, float]:
    """The window's top and the bottom of what is not covered by the composer (sticky on a desktop)."""
    return tuple(
        driver.execute_script(
            "const form = document.getElementById('ask-form');"
            "const sticky = getComputedStyle(form).position === 'sticky';"
            "return [0, innerHeight - (sticky ? form.getBoundingClientRect().height : 0)];"
        )
    )


def box(driver: Any, element: Any) -> dict[str, float]:
    return driver.execute_script(  # type: ignore[no-any-return]
        "const r = arguments[0].getBoundingClientRect(); return {top: r.top, bottom: r.bottom};", element
    )


def newest_text_in_sight(driver: Any, turn: Any) -> None:
    """The last line of the answer so far is on screen, above the composer."""
    top, bottom = visible_area(driver)
    answer = turn.find_element(By.CSS_SELECTOR, ".answer")
    last = box(driver, answer)
    assert answer.text, "no text yet"
    assert top <= last["bottom"] <= bottom + 1, f"answer ends at {last['bottom']:.0f}, visible {top}..{bottom:.0f}"


def focused_id(driver: Any) -> str:
    return driver.execute_script("return document.activeElement && document.activeElement.id")  # type: ignore[no-any-return]


# ---------------------------------------------------------------- following the answer


def second_answer_streaming(browser: Any, gateway: str, first: str) -> Any:
    """Asks `first` on a fresh page and waits for its answer, then asks for a long second answer: its card,
    looked at while it streams."""
    first_answer(browser, gateway + "/", first)
    ask(browser, "slowly: a long second answer")
    WebDriverWait(browser, 30).until(lambda d: "Sentence 5 " in d.find_element(By.CSS_SELECTOR, "#turn-2 .answer").text)
    turn = browser.find_element(By.ID, "turn-2")
    assert turn.get_attribute("data-finished") is None
    return turn


def test_each_new_answer_is_followed_into_view_on_a_desktop(
    short_window: Any, gateway: str, assert_accessible: Accessible
) -> None:
    browser = short_window
    turn = second_answer_streaming(browser, gateway, "A long first answer")
    assert browser.execute_script("return scrollY") > 0
    newest_text_in_sight(browser, turn)
    assert focused_id(browser) == "question"  # scrolling did not take the focus
    finished_turn(browser, 2)
    # Finished: the end of the answer is on screen, not under the sticky composer, and the focus is in the
    # question box.
    newest_text_in_sight(browser, turn)
    assert focused_id(browser) == "question"
    assert_accessible(browser, "desktop, two answers")
    # A short answer after them: its question and its whole answer are in sight.
    ask(browser, "A short third question")
    third = finished_turn(browser, 3)
    top, bottom = visible_area(browser)
    for part in (".asked", ".answer"):
        seen = box(browser, third.find_element(By.CSS_SELECTOR, part))
        assert top <= seen["top"] and seen["bottom"] <= bottom + 1, f"{part} at {seen}, visible {top}..{bottom}"


def test_each_new_answer_is_followed_into_view_on_a_phone(
    phone: Any, gateway: str, assert_accessible: Accessible
) -> None:
    browser = phone
    turn = second_answer_streaming(browser, gateway, "A first question")
    newest_text_in_sight(browser, turn)
    finished_turn(browser, 2)
    # Focusing the question box (below the conversation on a phone) must not scroll the answer away.
    top, bottom = visible_area(browser)
    answer = box(browser, turn.find_element(By.CSS_SELECTOR, ".answer"))
    assert answer["top"] < bottom and answer["bottom"] > top, f"answer at {answer}, screen {top}..{bottom}"
    assert focused_id(browser) == "question"
    assert_accessible(browser, "390 px phone, two answers")


# ---------------------------------------------------------------- 中文


def test_the_chinese_ui_says_everything_in_chinese(browser: Any, gateway: str, assert_accessible: Accessible) -> None:
    browser.get(gateway + "/")
    browser.find_element(By.ID, "lang-zh").click()
    ask(browser, "北风机器人2031年的营业收入是多少？")
    turn = finished_turn(browser, 1)
    badge = turn.find_element(By.CSS_SELECTOR, ".route-badge")
    assert badge.get_attribute("data-verdict") == "no_web"
    assert badge.find_element(By.CSS_SELECTOR, ".route-name").text == "无网络结果"
    # The score did not decide (a coverage gap did): no "best ≥ c" comparison is shown.
    assert "c 0.103" not in badge.text and "最高分" not in badge.text, badge.text
    assert badge.find_element(By.CSS_SELECTOR, ".route-task").text == "任务：查询（按规则判断）"
    note = badge.find_element(By.CSS_SELECTOR, ".route-note").text
    assert "知识库中没有所问期间的资料。" in note and "未配置网络搜索" in note, note
    assert "a note this page cannot read." in note  # an unknown code falls back to the server's text
    assert "web search is not configured" not in note and "knowledge base has no" not in note, note
    assert "仅依据本地段落" in badge.get_attribute("title")  # the verdict says what the answer rests on
    assert "网络: 未配置" in badge.text or "网络：未配置" in badge.text, badge.text
    stage = turn.find_element(By.CSS_SELECTOR, ".stages > li").text
    assert stage.startswith("规划 · 第 1 轮"), stage
    passage = turn.find_element(By.CSS_SELECTOR, ".citations li")
    assert passage.find_element(By.CSS_SELECTOR, "summary").text == "查看段落"
    assert passage.find_element(By.CSS_SELECTOR, ".passage-meta").text == "本地 · 得分 0.500"
    assert turn.find_element(By.CSS_SELECTOR, ".answer a.cite").get_attribute("aria-label") == "来源 1"
    assert browser.execute_script("return document.documentElement.lang") == "zh-CN"
    assert_accessible(browser, "中文, an answer")

    # Switching back relabels the answer already shown, from the same event.
    browser.find_element(By.ID, "lang-en").click()
    assert badge.find_element(By.CSS_SELECTOR, ".route-name").text.lower() == "no web"
    assert "web search is not configured" in badge.find_element(By.CSS_SELECTOR, ".route-note").text
    assert passage.find_element(By.CSS_SELECTOR, ".passage-meta").text == "local · score 0.500"
    assert badge.find_element(By.CSS_SELECTOR, ".route-task").text == "task: lookup (by rules)"


def test_an_older_server_without_codes_still_shows_its_note(browser: Any, gateway: str) -> None:
    browser.get(gateway + "/")
    browser.find_element(By.ID, "lang-zh").click()
    ask(browser, "legacy question")
    badge = finished_turn(browser, 1).find_element(By.CSS_SELECTOR, ".route-badge")
    assert badge.find_element(By.CSS_SELECTOR, ".route-name").text == "本地"  # from the route
    assert "最高分 0.500 ≥ c 0.100" in badge.text, badge.text  # the score decided: shown
    assert "searched without filters" in badge.find_element(By.CSS_SELECTOR, ".route-note").text


# ---------------------------------------------------------------- /docs offline, favicon


def test_docs_work_offline_and_the_page_has_a_favicon(
    browser: Any, gateway: str, assert_accessible: Accessible
) -> None:
    browser.get(gateway + "/docs")
    WebDriverWait(browser, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
    assert "WeaverBird gateway" in browser.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".opblock-summary-path"))
    paths = {e.get_attribute("data-path") for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")}
    assert "/api/ask" in paths, paths
    # Everything it loaded came from the gateway (this machine has no internet, and none is needed).
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    assert loaded and all(url.startswith(gateway) for url in loaded), loaded
    assert any(url.endswith("/swagger-ui-bundle.js") for url in loaded), loaded

    icon = httpx.get(f"{gateway}/favicon.ico", timeout=10)
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    browser.get(gateway + "/")
    linked = browser.find_element(By.CSS_SELECTOR, 'link[rel="icon"]').get_attribute("href")
    assert httpx.get(linked, timeout=10).status_code == 200


# ---------------------------------------------------------------- deleting with an admin token


def delete_from_list(driver: Any, document_id: str) -> None:
    row = driver.find_element(By.CSS_SELECTOR, f'.kb-doc[data-document-id="{document_id}"]')
    row.find_element(By.CSS_SELECTOR, ".kb-delete-button").click()
    driver.find_element(By.ID, "kb-confirm-delete").click()


def wait_for_token_dialog(driver: Any) -> Any:
    WebDriverWait(driver, 20).until(
        lambda d: d.find_element(By.ID, "admin-token-dialog").get_attribute("open") is not None
    )
    return driver.find_element(By.ID, "admin-token-dialog")


def test_delete_asks_for_an_admin_token_and_keeps_it_in_memory_only(
    browser: Any, gateway: str, ingester: ScriptedIngester, assert_accessible: Accessible
) -> None:
    # Without a token of its own the page's delete is refused (the gateway lends it no admin role).
    anonymous = httpx.delete(f"{gateway}/api/documents/doc-1", timeout=10)
    assert anonymous.status_code in (401, 403), anonymous.text
    assert "doc-1" in ingester.documents

    browser.get(gateway + "/")
    browser.find_element(By.ID, "tab-kb").click()
    WebDriverWait(browser, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".kb-doc")) == 2)
    delete_from_list(browser, "doc-1")
    dialog = wait_for_token_dialog(browser)
    assert focused_id(browser) == "admin-token"
    assert not browser.find_element(By.ID, "admin-token-error").is_displayed()  # nothing was refused yet
    assert_accessible(browser, "knowledge base, admin token dialog")

    # A token no header can carry is not sent: the dialog asks again and says why.
    browser.find_element(By.ID, "admin-token").send_keys("tök en" + Keys.ENTER)
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "admin-token-error").is_displayed())
    assert "letters, digits" in browser.find_element(By.ID, "admin-token-error").text
    # A wrong token: refused, and the dialog asks again saying so.
    browser.find_element(By.ID, "admin-token").send_keys("not-the-admin" + Keys.ENTER)
    WebDriverWait(browser, 20).until(lambda d: d.find_element(By.ID, "admin-token-error").is_displayed())
    assert "403" in browser.find_element(By.ID, "admin-token-error").text
    browser.find_element(By.ID, "admin-token").send_keys(ADMIN_TOKEN + Keys.ENTER)
    WebDriverWait(browser, 20).until(lambda d: "Deleted doc-1" in d.find_element(By.ID, "kb-status").text)
    assert dialog.get_attribute("open") is None
    assert "doc-1" not in ingester.documents
    assert ingester.delete_credentials[-3:] == [None, "Bearer not-the-admin", f"Bearer {ADMIN_TOKEN}"]

    # The token stays for this tab: the next delete goes through without asking.
    delete_from_list(browser, "doc-2")
    WebDriverWait(browser, 20).until(lambda d: "Deleted doc-2" in d.find_element(By.ID, "kb-status").text)
    assert ingester.delete_credentials[-1] == f"Bearer {ADMIN_TOKEN}"
    stored = browser.execute_script(
        "return JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])"
    )
    assert ADMIN_TOKEN not in stored, stored


def test_a_cancelled_token_dialog_deletes_nothing(
    browser: Any, gateway: str, ingester: ScriptedIngester, assert_accessible: Accessible
) -> None:
    ingester.documents["doc-3"] = "Saved page 3"
    browser.get(gateway + "/")  # a new page: the token of the last test is gone with it
    browser.find_element(By.ID, "tab-kb").click()
    WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, '.kb-doc[data-document-id="doc-3"]'))
    before = len(ingester.delete_credentials)
    delete_from_list(browser, "doc-3")
    wait_for_token_dialog(browser)
    browser.find_element(By.ID, "admin-token-cancel").click()
    WebDriverWait(browser, 20).until(lambda d: "Not deleted" in d.find_element(By.ID, "kb-status").text)
    assert ingester.delete_credentials[before:] == [None]
    assert "doc-3" in ingester.documents
    assert_accessible(browser, "knowledge base list")
