"""Tracing fixtures for the tests of the server interceptors: spans kept in memory, one provider per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from weaverbird_common.telemetry.tracing import configure_tracing


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture(scope="module")
def provider(spans: InMemorySpanExporter) -> Iterator[TracerProvider]:
    # Not installed globally: OpenTelemetry allows that once per process, and other tests may want it.
    tp = configure_tracing("weaverbird-test", None, exporter=spans, set_global=False)
    yield tp
    tp.shutdown()
