"""Which service exports which metrics, and the HTTP endpoint Prometheus scrapes.

Only the RPC metrics (`weaverbird_grpc_*`) are in the default registry from the start; a service's own
metrics are exported once `register_metrics(service)` ran (serve_forever does it), so the retriever
never shows an ingester lag of 0. Recording into a metric that is not registered is harmless.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from typing import TypeVar

import prometheus_client

log = logging.getLogger(__name__)

SERVICES = ("embedder", "retriever", "generator", "orchestrator", "ingester")
# Service -> the metrics it owns (named weaverbird_<service>_...); filled in by ServiceMetrics.
SERVICE_METRICS: dict[str, list[prometheus_client.metrics.MetricWrapperBase]] = {name: [] for name in SERVICES}

# Generation on CPU takes tens of seconds, so latency buckets reach two minutes.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)

_Metric = TypeVar("_Metric", bound=prometheus_client.metrics.MetricWrapperBase)


class ServiceMetrics:
    """Defines one service's own metrics: created outside any registry and filed under the service, so
    that register_metrics(service) exports them. Names must start with weaverbird_<service>_."""

    def __init__(self, service: str) -> None:
        self._service = service

    def _owned(self, metric: _Metric) -> _Metric:
        if not metric._name.startswith(f"weaverbird_{self._service}_"):
            raise ValueError(f"{metric._name} does not belong to {self._service}")
        SERVICE_METRICS[self._service].append(metric)
        return metric

    def counter(self, name: str, documentation: str, labels: Sequence[str] = ()) -> prometheus_client.Counter:
        return self._owned(prometheus_client.Counter(name, documentation, labels, registry=None))

    def gauge(self, name: str, documentation: str) -> prometheus_client.Gauge:
        return self._owned(prometheus_client.Gauge(name, documentation, registry=None))

    def histogram(
        self, name: str, documentation: str, labels: Sequence[str] = (), buckets: Sequence[float] = LATENCY_BUCKETS
    ) -> prometheus_client.Histogram:
        return self._owned(prometheus_client.Histogram(name, documentation, labels, buckets=buckets, registry=None))


# Which services' metrics each registry already holds (registering twice would raise).
_REGISTERED: weakref.WeakKeyDictionary[prometheus_client.CollectorRegistry, set[str]] = weakref.WeakKeyDictionary()


def register_metrics(service: str, registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY) -> None:
    """Adds `service`'s own metrics to `registry` (the default one unless given); idempotent.

    The RPC metrics are always in the default registry; with this call a service exports them plus
    its own and nobody else's, so no dashboard reads a zero from a service that never records it.

    Raises:
        ValueError: `service` is not one of SERVICES.
    """
    if service not in SERVICE_METRICS:
        raise ValueError(f"unknown service {service!r}; expected one of {', '.join(SERVICES)}")
    done = _REGISTERED.setdefault(registry, set())
    if service in done:
        return
    for metric in SERVICE_METRICS[service]:
        registry.register(metric)
    done.add(service)


def start_metrics_server(
    port: int, addr: str = "0.0.0.0", registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY
) -> None:
    """Serves `registry` (the default one unless given) at http://addr:port/metrics in a background thread.

    Args:
        port: TCP port; 0 disables the endpoint (nothing is started).
        addr: interface to bind; all interfaces by default, since Prometheus scrapes the pod IP.
        registry: what to serve.
    """
    if port == 0:
        return
    prometheus_client.start_http_server(port, addr=addr, registry=registry)
    log.info("metrics endpoint port=%d", port)


def metrics_text(registry: prometheus_client.CollectorRegistry = prometheus_client.REGISTRY) -> str:
    """Returns the Prometheus text exposition of `registry` (the default one unless given)."""
    return prometheus_client.generate_latest(registry).decode("utf-8")
