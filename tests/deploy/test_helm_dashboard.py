"""The Grafana dashboard against the metric contract in deploy/metrics.json, and the chart's copy of it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import chart_tools as ct
import promql_parser


def _contract() -> dict[str, str]:
    return json.loads(ct.METRICS.read_text())


def test_metrics_contract_is_well_formed() -> None:
    contract = _contract()
    assert contract
    for name, kind in contract.items():
        assert re.fullmatch(r"weaverbird_[a-z0-9_]+", name), name
        assert kind in {"counter", "gauge", "histogram"}, name
        assert name.endswith("_total") == (kind == "counter"), f"{name}: only counters end in _total"
        assert not name.endswith(("_bucket", "_sum", "_count")), name


def test_chart_dashboard_is_a_copy_of_deploy_grafana() -> None:
    assert ct.CHART_DASHBOARD.read_bytes() == ct.DASHBOARD.read_bytes()


def _expressions(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for p in items:
            yield p
            yield from panels(p.get("panels", []))

    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if variable.get("type") == "query" and query:
            # label_values(<selector>, label) is Grafana's, not PromQL: check its selector.
            match = re.fullmatch(r"label_values\((.+),\s*\w+\)", query)
            yield f"variable {variable['name']}", match.group(1) if match else query


def _metric_names(expr: str) -> list[str]:
    # Grafana's interval variables are not PromQL; any duration parses the same way.
    expr = re.sub(r"\$__(rate_interval|interval|range)", "5m", expr)
    names: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"selector without a literal metric name in {expr!r}"
            names.append(node.name)
        return True

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def _contract_name(name: str, contract: dict[str, str]) -> str | None:
    if name in contract:
        return name if contract[name] != "histogram" else None  # a histogram is queried by its series
    for suffix in ("_bucket", "_sum", "_count"):
        base = name.removesuffix(suffix)
        if base != name and contract.get(base) == "histogram":
            return base
    return None


def test_dashboard_queries_only_contract_metrics() -> None:
    contract = _contract()
    dashboard = json.loads(ct.DASHBOARD.read_text())
    used: set[str] = set()
    for title, expr in _expressions(dashboard):
        names = _metric_names(expr)
        assert names, f"{title}: no metric in {expr!r}"
        for name in names:
            base = _contract_name(name, contract)
            assert base, f"{title}: {name} is not in deploy/metrics.json (histograms need _bucket/_sum/_count)"
            used.add(base)
    assert used == set(contract), f"metrics without a panel: {sorted(set(contract) - used)}"


def test_dashboard_has_the_required_panels() -> None:
    dashboard = json.loads(ct.DASHBOARD.read_text())
    titles = " | ".join(p["title"].lower() for p in dashboard["panels"])
    for needle in (
        "latency by route",
        "fallback",
        "first token",
        "kb size",
        "kb growth",
        "lag",
        "dead letter",
        "error",
    ):
        assert needle in titles, needle
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    expressions = dict(_expressions(dashboard))
    assert 'route="web"' in expressions["Web fallback rate"]
    assert 'code!="OK"' in expressions["gRPC error ratio by service (non-OK codes)"]


def test_dashboard_configmap_carries_the_file(render) -> None:
    (cm,) = [c for c in ct.of_kind(render("default"), "ConfigMap") if c["metadata"]["labels"].get("grafana_dashboard")]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(cm["data"]["weaverbird-dashboard.json"]) == json.loads(ct.DASHBOARD.read_text())
