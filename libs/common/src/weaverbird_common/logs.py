"""Process-wide logging set-up: one line per event, machine-parsable key=value style, with trace ids."""

from __future__ import annotations

import logging
import sys

from opentelemetry import trace

# trace_id/span_id come from TraceContextFilter; the defaults keep the format safe on records it missed.
_FORMAT = (
    "%(asctime)s level=%(levelname)s service={service} logger=%(name)s "
    "trace_id=%(trace_id)s span_id=%(span_id)s %(message)s"
)


class TraceContextFilter(logging.Filter):
    """Adds `trace_id` and `span_id` (hex, or "-" outside a span) to every record it sees.

    Attach it to a handler, not a logger: handler filters also see records propagated from child
    loggers. `configure_logging` does this.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            record.trace_id = trace.format_trace_id(ctx.trace_id)
            record.span_id = trace.format_span_id(ctx.span_id)
        else:
            record.trace_id = "-"
            record.span_id = "-"
        return True


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
