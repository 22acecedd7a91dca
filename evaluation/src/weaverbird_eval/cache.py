"""Where evaluation runs keep embeddings between runs (embedding 38k chunks with a CPU model takes
minutes to hours; the same texts and model always give the same vectors)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "WEAVERBIRD_EVAL_CACHE"


def cache_dir() -> Path:
    """`$WEAVERBIRD_EVAL_CACHE`, else var/eval-cache under the working directory."""
    return Path(os.environ.get(CACHE_ENV) or Path("var") / "eval-cache")
