"""`weaverbird` command line: ask, ingest, add, up, models, eval."""

from __future__ import annotations

import argparse
import sys

from weaverbird_cli import commands
from weaverbird_cli.settings import CliSettings


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:
        # The evaluation harness has its own options and heavier dependencies (requirements/eval.txt).
        from weaverbird_eval.cli import main as eval_main

        return eval_main(argv[1:])
    settings = CliSettings()
    parser = argparse.ArgumentParser(prog="weaverbird", description="WeaverBird financial question answering.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_ask = sub.add_parser("ask", help="ask a question; streams the answer with citations")
    p_ask.add_argument("question")
    p_ask.add_argument("--top-k", type=int, help="K: passages retrieved per source")
    p_ask.add_argument("--top-j", type=int, help="J: passages given to the model")
    p_ask.add_argument("--threshold", type=float, help="c: web-search threshold on the best local score")
    p_ask.add_argument("--addr", default=settings.orchestrator_addr, help="orchestrator host:port")

    p_ingest = sub.add_parser("ingest", help="add files or directories (PDF, HTML, Markdown, text)")
    p_ingest.add_argument("paths", nargs="+")
    p_ingest.add_argument("--addr", default=settings.ingester_addr, help="ingester host:port")

    p_add = sub.add_parser("add", help="save a URL or a file to the knowledge base")
    p_add.add_argument("target", help="http(s) URL or file path")
    p_add.add_argument("--async", dest="asynchronous", action="store_true", help="queue via Kafka, don't wait")
    p_add.add_argument("--addr", default=settings.ingester_addr, help="ingester host:port")

    sub.add_parser("up", help="start all services locally with the demo knowledge base")
    sub.add_parser("models", help="prepare the local model files")
    sub.add_parser("eval", help="retrieval | calibrate | answers on ../shared/data (see `weaverbird eval -h`)")

    args = parser.parse_args(argv)
    if args.command == "ask":
        return commands.ask(args.question, args.addr, args.top_k, args.top_j, args.threshold)
    if args.command == "ingest":
        return commands.ingest(args.paths, args.addr)
    if args.command == "add":
        return commands.add(args.target, args.addr, args.asynchronous)
    if args.command == "up":
        return commands.up(settings)
    path = commands.prepare_model(settings)
    print(f"model ready: {path}" if path else "external generator endpoint configured; nothing to prepare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
