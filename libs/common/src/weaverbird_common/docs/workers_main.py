"""Entry point of an extraction worker process: `python -m weaverbird_common.docs.workers_main FD`.

Kept apart from docs.workers so the pool does not import the loaders that import the pool: the
worker preloads the loaders (and their parsers) before its first call, the pool never needs them.
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

# Loaded before the first request, so the first parse does not pay for the imports.
import weaverbird_common.docs.loaders  # noqa: F401
from weaverbird_common.docs.workers import serve

if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])))
