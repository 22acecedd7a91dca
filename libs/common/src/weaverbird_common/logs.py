"""Process-wide logging set-up: one line per event, machine-parsable key=value style, with trace ids."""

from __future__ import annotations

import logging
import sys

from weaverbird_common.telemetry import TraceContextFilter

# trace_id/span_id come from TraceContextFilter; the defaults keep the format safe on records it missed.
_FORMAT = (
    "%(asctime)s level=%(levelname)s service={service} logger=%(name)s "
    "trace_id=%(trace_id)s span_id=%(span_id)s %(message)s"
)


def configure_logging(level: str = "INFO", service: str = "weaverbird") -> None:
    """Configures the root logger once for a service process.

    Every line carries the current OpenTelemetry trace and span ids ("-" outside a span).
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT.format(service=service), defaults={"trace_id": "-", "span_id": "-"}))
    handler.addFilter(TraceContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
