"""How often English units reach a Chinese question's top 5 on the bilingual KB of mixed_kb.py (issue 35:
the spaced-only density lifted English tables over Chinese passages). Run from the repository root:

    .venv/bin/python benchmarks/results/eval/retrieval-figures-zh/other_language.py

Prints, per system, the English units among the 815 Chinese questions' top-5 units and the questions
with any."""

from __future__ import annotations

import sys
from pathlib import Path

from weaverbird_eval import datasets
from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.metrics import collapse
from weaverbird_eval.systems import build_system

sys.path.insert(0, str(Path(__file__).parent))
from mixed_kb import SYSTEMS, mixed_set


def main() -> int:
    evalset = mixed_set(datasets.DEFAULT_DATA)
    chunks = chunk_units(evalset)
    chinese = [q for q in evalset.queries if q.part.startswith("zh/")]
    for name in SYSTEMS.split(","):
        system = build_system(name)
        try:
            system.index(chunks.texts, evalset.language, evalset.corpus_label, chunks.metadata)
            counts = []
            for q in chinese:
                top = collapse(system.search([q.text], 100)[0], chunks.unit_ids, 5)
                counts.append(sum(1 for unit in top if not unit.startswith("ctx-")))  # Fin-Eva units are ctx-*
        finally:
            system.close()
        print(
            f"{name}: {sum(counts)} English units in {5 * len(chinese)} top-5 slots, {sum(c > 0 for c in counts)} "
            f"of {len(chinese)} Chinese questions with any",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
