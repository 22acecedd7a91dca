"""Alert rules and dashboard queries checked by Prometheus' own tool, promtool: the rules load, each
alert fires on its pattern (tests/deploy/promtool/), and every dashboard query parses and gives
the right number where replicas could multiply a shared value."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from deploy_tools import REPO

RULES = REPO / "deploy" / "prometheus" / "weaverbird-alerts.yaml"
CHART_RULES = REPO / "deploy" / "helm" / "weaverbird" / "rules" / "weaverbird-alerts.yaml"
RULE_TESTS = Path(__file__).parent / "promtool" / "weaverbird-alerts.test.yaml"
DASHBOARD = REPO / "deploy" / "grafana" / "weaverbird-dashboard.json"

# Grafana's variables are not PromQL: replace them with what Grafana would send.
GRAFANA_VARIABLES = {"$namespace": ".*", "$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def _promtool(promtool: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_alert_rules_load(promtool: str) -> None:
    proc = _promtool(promtool, "check", "rules", str(RULES))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}
    for needed in (
        "WeaverbirdHighErrorRatio",
        "WeaverbirdHighWebFallbackRate",
        "WeaverbirdIngesterLagHigh",
        "WeaverbirdDeadLetters",
        "WeaverbirdServiceDown",
    ):
        assert needed in alerts


def test_every_alert_fires_in_its_unit_test(promtool: str) -> None:
    proc = _promtool(promtool, "test", "rules", str(RULE_TESTS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout
    tested = {
        case["alertname"]
        for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}
    assert tested == alerts, f"alerts never seen firing: {sorted(alerts - tested)}"


def test_a_broken_rule_is_caught(promtool: str, tmp_path: Path) -> None:
    """The check has teeth: a typo in PromQL fails it."""
    broken = RULES.read_text().replace("sum by (namespace) (weaverbird_ingester_consumer_lag_messages)", "sum by (")
    (tmp_path / "broken.yaml").write_text(broken)
    assert _promtool(promtool, "check", "rules", str(tmp_path / "broken.yaml")).returncode != 0


def test_chart_rules_are_a_copy_of_deploy_prometheus() -> None:
    assert CHART_RULES.read_bytes() == RULES.read_bytes()


def _dashboard_expressions() -> Iterator[tuple[int, str, str]]:
    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for panel in panels(json.loads(DASHBOARD.read_text())["panels"]):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            yield panel["id"], panel["title"], expr


def test_dashboard_queries_pass_promtool(promtool: str, tmp_path: Path) -> None:
    """Every panel query as a recording rule: promtool parses it with Prometheus' own parser."""
    rules = [
        {"record": f"dashboard:panel_{panel_id}_{i}", "expr": expr}
        for i, (panel_id, _, expr) in enumerate(_dashboard_expressions())
    ]
    assert rules
    path = tmp_path / "dashboard-rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    proc = _promtool(promtool, "check", "rules", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _kb_size_expressions() -> dict[str, str]:
    return {title: expr for _, title, expr in _dashboard_expressions() if "collection_points" in expr}


def test_kb_size_panels_do_not_multiply_by_retriever_replicas(promtool: str, tmp_path: Path) -> None:
    """Three retriever replicas in front of one Qdrant server all report its 1000 points; another
    release's single retriever reports 50. The KB is 1050 points, not 3050; it grew by 1050 - 450."""
    kb = _kb_size_expressions()
    assert set(kb) == {"KB size (points)", "KB growth, last 24 h", "KB size over time"}
    series = [
        {
            "series": f'weaverbird_retriever_collection_points{{namespace="wb", service="wb-retriever", pod="r-{i}"}}',
            "values": "400+0x1440 1000+0x60",
        }
        for i in range(3)
    ]
    series.append(
        {
            "series": 'weaverbird_retriever_collection_points{namespace="other", service="other-retriever", pod="r-0"}',
            "values": "50+0x1500",
        }
    )
    at = "1470m"  # past the day of 400, so `offset 1d` reads the old size
    cases = [
        {"expr": kb["KB size (points)"], "eval_time": at, "exp_samples": [{"labels": "{}", "value": 1050}]},
        {"expr": kb["KB size over time"], "eval_time": at, "exp_samples": [{"labels": "{}", "value": 1050}]},
        {"expr": kb["KB growth, last 24 h"], "eval_time": at, "exp_samples": [{"labels": "{}", "value": 600}]},
    ]
    test_file = tmp_path / "kb-size.test.yaml"
    test_file.write_text(
        yaml.safe_dump(
            {"rule_files": [], "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": cases}]}
        )
    )
    proc = _promtool(promtool, "test", "rules", str(test_file))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_panel_sums_a_shared_gauge_over_replicas() -> None:
    """Gauges that every replica reports for one shared thing must be reduced per Service first."""
    for title, expr in _kb_size_expressions().items():
        for selector in re.findall(r"\w+\s*\(\s*weaverbird_retriever_collection_points", expr):
            assert selector.startswith(("max", "min", "avg")), f"{title}: {expr}"
