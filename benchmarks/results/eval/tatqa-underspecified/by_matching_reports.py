"""TAT-QA served hit@5 by how many of the 278 reports hold every content word of the question.

hit@5: a relevant unit among the first five (R@5 also counts a question's further relevant units).

A question whose words (after dropping question framing: what, change, percentage, average, table ...)
all occur in many reports does not say which report it means; no ranking can tell those reports apart
from the question alone. Reads the per-question rankings written by
`benchmarks/results/eval/retrieval-statement-rows/probe.py served-use OUT.json tatqa`:

    python benchmarks/results/eval/tatqa-underspecified/by_matching_reports.py OUT.json ../shared/data
"""

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

FRAMING = set(
    """what was were is are the of in and for from to how much many by between change percentage percent
    average total ratio did does do which year years respectively difference increase decrease value amount
    its company a an as at on table show shows listed included represent what's if this that be has have had
    compared proportion sum""".split()
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z\-]+|\d{4}", text.lower()) if w not in FRAMING}


def report_text(context: dict) -> str:
    table = " ".join(" ".join(row) for row in context["table"]["table"])
    return (table + " " + " ".join(p["text"] for p in context["paragraphs"])).lower()


def main() -> None:
    rows = json.loads(Path(sys.argv[1]).read_text())
    data = json.loads((Path(sys.argv[2]) / "tatqa" / "tatqa_dataset_dev.json").read_text())
    reports = [report_text(c) for c in data]
    buckets: dict[str, list[bool]] = defaultdict(list)
    chance = []
    for r in rows:
        ws = words(r["text"])
        n = sum(all(re.search(r"\b" + re.escape(w), t) for w in ws) for t in reports) if ws else len(reports)
        n = max(n, 1)
        chance.append(min(1.0, 5 / n))
        hit = bool(set(r["relevant"]) & set(r["units"][:5]))
        label = "1" if n <= 1 else "2-5" if n <= 5 else "6-20" if n <= 20 else ">20"
        buckets[label].append(hit)
    print("reports holding every content word | questions | served hit@5")
    for label in ("1", "2-5", "6-20", ">20"):
        hits = buckets[label]
        print(f"{label} | {len(hits)} | {sum(hits) / len(hits):.3f}")
    print(f"all | {len(rows)} | {sum(sum(h) for h in buckets.values()) / len(rows):.3f}")
    print(f"hit@5 if each question's matching reports were drawn at random (5/n): {sum(chance) / len(chance):.3f}")


if __name__ == "__main__":
    main()
