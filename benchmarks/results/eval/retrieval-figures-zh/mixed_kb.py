"""The figure prior on one KB holding both languages (issue 35): Fin-Eva's Chinese contexts and TAT-QA's
English tables and paragraphs in one collection, every question of both sets asked against it, so the
English tables compete with the Chinese passages for a Chinese question as in a served bilingual KB.
Parts are "<language>/<kind>". Run from the repository root:

    .venv/bin/python benchmarks/results/eval/retrieval-figures-zh/mixed_kb.py [systems]

Writes mixed.md and mixed.json next to this file (the retrieval report's format)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

from weaverbird_eval import datasets, retrieval

SYSTEMS = "served-use-fig0,served-use-spaced,served-use"


def mixed_set(data: Path) -> datasets.EvalSet:
    zh, en = datasets.load("fineva", data), datasets.load("tatqa", data)
    queries = [replace(q, part=f"zh/{q.part}") for q in zh.queries] + [
        replace(q, part=f"en/{q.part}") for q in en.queries
    ]
    note = f"{len(zh.units)} Fin-Eva contexts + {len(en.units)} TAT-QA units"
    return datasets.EvalSet("fineva+tatqa", "zh", zh.units + en.units, queries, note)


def main() -> int:
    systems = (sys.argv[1] if len(sys.argv) > 1 else SYSTEMS).split(",")
    rows = retrieval.evaluate_set(mixed_set(datasets.DEFAULT_DATA), systems)
    out = Path(__file__).parent
    (out / "mixed.md").write_text(retrieval.markdown(rows), encoding="utf-8")
    payload = json.dumps([asdict(r) for r in rows], indent=2, ensure_ascii=False)
    (out / "mixed.json").write_text(payload, encoding="utf-8")
    print(retrieval.markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
