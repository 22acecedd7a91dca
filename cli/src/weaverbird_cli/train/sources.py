"""Where training passages come from (FinanceBench filings, TAT-QA reports) and the evaluation questions
they are kept apart from."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from weaverbird_common.docs.documents import Document, Page

# The CLI never imports the evaluation package: it is an optional install (requirements/eval.txt).
# FinanceBench pages are read with its loader, imported when asked for; its question sets are found
# as files, so the leakage gate still holds them out.
EVAL_PACKAGE = "weaverbird_eval"


class SourceUnavailable(RuntimeError):
    """A training source needs a package that is not installed here."""


def _eval_data_dirs() -> tuple[Path, ...]:
    spec = importlib.util.find_spec(EVAL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        print(
            f"warning: {EVAL_PACKAGE} is not installed: only the shared data's evaluation questions are held out",
            file=sys.stderr,
        )
        return ()
    return tuple(Path(p) / "data" for p in spec.submodule_search_locations)


FINEVA_FILES = (
    "financial_event_interpretation.csv",
    "financial_product_analysis.csv",
    "financial_document_extraction.csv",
)


def financebench_documents(data: Path, limit_pages: int | None = None) -> Iterator[Document]:
    try:
        module = importlib.import_module(f"{EVAL_PACKAGE}.financebench_kb")
    except ImportError as exc:
        raise SourceUnavailable(
            f"FinanceBench pages are read by the evaluation package ({exc}): "
            "`pip install -e evaluation` (requirements/eval.txt), or train on --sources tatqa"
        ) from exc
    documents: Iterator[Document] = module.page_documents(data, limit_pages=limit_pages)
    return documents


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _markdown_table(rows: list[list[str]]) -> str:
    """A pipe table with a header rule, so the facts reader takes it as a table; the header is the first
    row naming years (TAT-QA puts captions such as "Years Ended September 30," in rows above it)."""
    if not rows:
        return ""
    top = next((i for i, row in enumerate(rows) if any(_YEAR.search(cell) for cell in row)), 0)
    caption = " ".join(cell.strip() for row in rows[:top] for cell in row if cell.strip())
    lines = ["| " + " | ".join(cell.strip() for cell in row) + " |" for row in rows[top:]]
    table = "\n".join([lines[0], "|" + "---|" * len(rows[top]), *lines[1:]])
    return f"{caption}\n\n{table}" if caption else table


def tatqa_documents(data: Path) -> Iterator[Document]:
    """One Document per TAT-QA context (its table and paragraphs; the questions are not read)."""
    contexts = json.loads((data / "tatqa" / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    for ctx in contexts:
        uid = ctx["table"]["uid"]
        text = "\n\n".join([_markdown_table(ctx["table"]["table"]), *(p["text"] for p in ctx["paragraphs"])])
        title = f"TAT-QA report {uid[:8]}"
        yield Document(f"tatqa-{uid}", title, title, [Page(1, text)], "en", "", None, None, "")


def evaluation_questions(data: Path, extra_dirs: tuple[Path, ...] | None = None) -> list[str]:
    """Every evaluation question: FinanceBench, TAT-QA, Fin-Eva under `data`, and the project's own sets
    (`extra_dirs`, by default the evaluation package's data folder, found without importing it)."""
    if extra_dirs is None:
        extra_dirs = _eval_data_dirs()
    out: list[str] = []
    fb = data / "financebench" / "questions.jsonl"
    if fb.exists():
        out += [json.loads(line)["question"] for line in fb.read_text(encoding="utf-8").splitlines() if line.strip()]
    tq = data / "tatqa" / "tatqa_dataset_dev.json"
    if tq.exists():
        out += [q["question"] for ctx in json.loads(tq.read_text(encoding="utf-8")) for q in ctx["questions"]]
    for name in FINEVA_FILES:
        path = data / "fineva" / name
        if path.exists():
            with path.open(encoding="utf-8-sig", newline="") as fh:
                out += [row["question"] for row in csv.DictReader(fh) if row.get("question")]
    for folder in extra_dirs:
        for path in sorted(folder.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    out += _asked(json.loads(line))
    return [q for q in out if q.strip()]


_ASKED_KEYS = frozenset({"question", "followup", "reference", "text", "answer"})


def _asked(row: object) -> list[str]:
    """Questions (and answers, turns of a history) anywhere in a record of the project's own sets."""
    if isinstance(row, dict):
        found = [v for k, v in row.items() if k in _ASKED_KEYS and isinstance(v, str)]
        return found + [s for v in row.values() if isinstance(v, (dict, list)) for s in _asked(v)]
    if isinstance(row, list):
        return [s for v in row for s in _asked(v)]
    return []
