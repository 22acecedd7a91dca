"""Headless Chromium (Debian's chromium + chromium-driver, found or installed by scripts/chromium.sh) driven
through Selenium, against the gateway in front of the stack `make run` serves (default model, demo KB)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.default_stack import default_model_stack
from fixtures.gateway_server import GatewayServer
from fixtures.web_servers import PageServer, SearchServer
from weaverbird_cli.stack import LocalStack

REPO = Path(__file__).resolve().parents[2]
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
# Reported whatever their impact (issue 33): content outside landmarks, skipped heading levels, and a
# scrolling region a keyboard cannot reach.
AXE_BANNED_RULES = frozenset({"region", "heading-order", "scrollable-region-focusable"})
SCREENSHOTS = REPO / "benchmarks" / "results" / "screenshots"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives headless Chromium against the running stack")


def _unavailable(reason: str) -> None:
    """Skips with the reason on a developer machine; in CI (CI=true) the browser test must run, so fails."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser test cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_paths() -> dict[str, str]:
    """CHROMIUM and CHROMEDRIVER paths from scripts/chromium.sh (which installs them with apt when missing)."""
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "chromium.sh")], capture_output=True, text=True, timeout=900, check=False
    )
    if result.returncode == 2:
        _unavailable(f"no chromium: {result.stderr.strip()}")
    if result.returncode != 0:
        pytest.fail(f"scripts/chromium.sh failed ({result.returncode}): {result.stderr[-2000:]}")
    paths = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    assert paths.keys() >= {"CHROMIUM", "CHROMEDRIVER"}, result.stdout
    return paths


@pytest.fixture(scope="module")
def browser(chromium_paths: dict[str, str]) -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed: pip install -r requirements/browser.txt")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium_paths["CHROMIUM"]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,1100")
    # An explicit driver path: Selenium Manager must not try to download one (no internet here).
    driver = webdriver.Chrome(service=Service(executable_path=chromium_paths["CHROMEDRIVER"]), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def default_stack(
    tmp_path_factory: pytest.TempPathFactory,
    demo_kb: Path,
    web_search_server_session: SearchServer,
    web_page_server_session: PageServer,
) -> Iterator[LocalStack]:
    """What `make run` serves, set up as tests/integration/test_demo_answers.py does: the demo KB and the
    default model (Qwen2.5-Coder-1.5B, assembled by `make models`), greedy so answers do not vary. The
    web path goes to the local SearxNG-compatible and page servers (there is no internet here), so a
    question the KB cannot answer brings web sources the page can save; c stays the calibrated default."""
    allow = json.dumps([web_page_server_session.allow_entry])
    yield from default_model_stack(
        tmp_path_factory.mktemp("browser-stack"),
        demo_kb,
        orchestrator_env={
            "ORCHESTRATOR_WEB_PROVIDER": "searxng",
            "ORCHESTRATOR_WEB_BASE_URL": web_search_server_session.base_url,
            "ORCHESTRATOR_WEB_ALLOW_HOSTS": allow,
        },
        ingester_env={"INGESTER_FETCH_ALLOW_HOSTS": allow},
    )


@pytest.fixture(scope="module")
def gateway_url(default_stack: LocalStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("browser-gateway") / "gateway.log"
    with GatewayServer(default_stack.config.addr("orchestrator"), default_stack.config.addr("ingester"), log) as server:
        yield server.base_url


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def _axe_violations(driver: Any, source: str) -> list[dict[str, Any]]:
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(source)
    driver.set_script_timeout(120)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']})"
        ".then((r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact,"
        " nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))))"
        ".catch((e) => done({error: String(e)}));"
    )
    assert isinstance(result, list), result
    return result


@pytest.fixture(scope="session")
def assert_accessible() -> Callable[[Any, str], None]:
    """`assert_accessible(driver, state)`: axe-core (tests/browser/package.json, `npm ci --prefix tests/browser`)
    run on the page as it is finds no serious or critical violation and none of AXE_BANNED_RULES."""
    if not AXE.exists():
        # Installed like Chromium: on first use, from the pinned lock file (package-lock.json).
        try:
            result = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(AXE.parents[2])],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        except FileNotFoundError:
            _unavailable("npm is missing, so axe-core cannot be installed (npm ci --prefix tests/browser)")
        if result.returncode != 0 or not AXE.exists():
            pytest.fail(f"npm ci --prefix tests/browser failed ({result.returncode}): {result.stderr[-2000:]}")
    source = AXE.read_text(encoding="utf-8")

    def check(driver: Any, state: str) -> None:
        bad = [
            v
            for v in _axe_violations(driver, source)
            if v["impact"] in ("serious", "critical") or v["id"] in AXE_BANNED_RULES
        ]
        assert not bad, f"axe-core, {state}: {bad}"

    return check
