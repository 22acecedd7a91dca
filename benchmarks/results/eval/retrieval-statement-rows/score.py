"""The retrieval metrics (weaverbird_eval.metrics.score, depth 10) of probe.py's files, all questions and each half."""

import json
import sys

from weaverbird_eval.metrics import KS, score

for path in sys.argv[1:]:
    rows = json.load(open(path))
    units = {x["id"]: x["units"][: max(KS)] for x in rows}
    relevant = {x["id"]: frozenset(x["relevant"]) for x in rows}
    m = score(units, relevant)
    half = {}
    for held in (True, False):
        ids = [x["id"] for x in rows if x["held"] == held]
        half[held] = score({i: units[i] for i in ids}, {i: relevant[i] for i in ids})["R@5"]
    metrics = " ".join(f"{k} {m[k]:.3f}" for k in ("R@1", "R@5", "R@10", "MRR", "nDCG@10"))
    print(f"{path}: {metrics} | tune R@5 {half[True]:.3f} report R@5 {half[False]:.3f}")
