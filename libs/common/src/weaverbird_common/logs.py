"""Process-wide logging set-up: one line per event, machine-parsable key=value style."""

from __future__ import annotations

import logging
import sys


def configure_logging(level: str = "INFO", service: str = "weaverbird") -> None:
    """Configures the root logger once for a service process."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(f"%(asctime)s level=%(levelname)s service={service} logger=%(name)s %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
