"""Served-use rankings per question, as `weaverbird eval retrieval` computes them, written out for reading
the misses (units to depth 20). Run from a checkout with its packages on PYTHONPATH:

    WEAVERBIRD_EVAL_CACHE=var/eval-cache python benchmarks/results/eval/retrieval-statement-rows/probe.py \
        served-use /tmp/financebench.json financebench     # or tatqa, fineva, financebench-fresh
    python benchmarks/results/eval/retrieval-statement-rows/score.py /tmp/financebench.json
"""

import json
import sys
from pathlib import Path

from weaverbird_eval.corpus import chunk_units
from weaverbird_eval.datasets import is_held_out, load
from weaverbird_eval.metrics import collapse
from weaverbird_eval.systems import build_system

name, out, dataset = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
evalset = load(dataset, Path("../shared/data"))
chunks = chunk_units(evalset)
system = build_system(name)
system.index(chunks.texts, evalset.language, evalset.corpus_label, chunks.metadata)
rows = []
for q in evalset.queries:
    ranking = system.search([q.text], 100)[0]
    units = collapse(ranking, chunks.unit_ids, 20)
    rows.append({"id": q.id, "text": q.text, "relevant": sorted(q.relevant), "units": units, "held": is_held_out(q.id)})
system.close()
out.write_text(json.dumps(rows))
