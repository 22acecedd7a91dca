"""`weaverbird` command line: ask, chat, ingest, add, kb, up, models, eval."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from datetime import UTC, datetime
from pathlib import Path

import grpc
from weaverbird.v1 import retriever_pb2

from weaverbird_cli import commands, plugins, reembed, render
from weaverbird_cli.answering import DEFAULT_CHART_DIR, AskOptions
from weaverbird_cli.security import cli_credentials, remote_credentials
from weaverbird_cli.settings import CliSettings


def _since(text: str) -> datetime:
    """An ISO 8601 date or time; without a zone it is UTC."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or time: {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _add_kb_parser(sub: argparse._SubParsersAction, addr: str, retriever_addr: str) -> None:  # type: ignore[type-arg]
    p_kb = sub.add_parser("kb", help="list, show or delete knowledge-base documents, or list their facts")
    kb = p_kb.add_subparsers(dest="kb_command", required=True)
    p_list = kb.add_parser("list", help="documents, newest first, with origin and provenance")
    p_list.add_argument("--origin", choices=sorted(render.DOCUMENT_ORIGINS), help="how documents came in")
    p_list.add_argument("--company", help="company name or alias (case-insensitive)")
    p_list.add_argument("--language", choices=["en", "zh"])
    p_list.add_argument("--since", type=_since, help="added at or after (ISO 8601, e.g. 2026-03-01)")
    p_list.add_argument("--page-size", type=int, default=50, help="documents per page (1-500)")
    p_list.add_argument("--page-token", default="", help="next page, as printed after a page")
    p_list.add_argument("--all", dest="every", action="store_true", help="every page")
    p_show = kb.add_parser("show", help="one document's metadata, provenance and chunk count")
    p_show.add_argument("document_id")
    p_delete = kb.add_parser("delete", help="delete a document (its chunks and its dedupe entry)")
    p_delete.add_argument("document_id")
    for parser in (p_list, p_show, p_delete):
        parser.add_argument("--addr", default=addr, help="ingester host:port")
    p_facts = kb.add_parser("facts", help="the figures read from a document's tables (page, period, value)")
    p_facts.add_argument("document_id")
    p_facts.add_argument("--addr", default=retriever_addr, help="retriever host:port")
    reembed.add_parser(kb)


def _keys(text: str) -> tuple[str, ...]:
    keys = tuple(key.strip() for key in text.split(",") if key.strip())
    if not keys:
        raise argparse.ArgumentTypeError("expected keys separated by commas, e.g. name,share")
    return keys


def _rounds(text: str) -> int:
    try:
        rounds = int(text)
    except ValueError:
        rounds = -1
    if rounds < 0:
        raise argparse.ArgumentTypeError(f"not a number of rounds (0 or more): {text!r}")
    return rounds


def _add_question_options(parser: argparse.ArgumentParser, addr: str) -> None:
    """What `ask` and `chat` send besides the question."""
    parser.add_argument("--top-k", type=int, help="K: passages retrieved per source")
    parser.add_argument("--top-j", type=int, help="J: passages given to the model")
    parser.add_argument("--threshold", type=float, help="c: web-search threshold on the best local score")
    parser.add_argument(
        "--task", choices=list(render.TASKS), help="the kind of answer wanted (default: decided from the question)"
    )
    parser.add_argument(
        "--json-keys", type=_keys, default=(), metavar="KEY,KEY", help="keys of an extraction's JSON answer"
    )
    parser.add_argument(
        "--max-rounds",
        type=_rounds,
        metavar="N",
        help="plan-execute-express-review rounds of an analysis (0 = one pass)",
    )
    parser.add_argument(
        "--chart-dir", type=Path, default=DEFAULT_CHART_DIR, help=f"where chart PNGs go (default {DEFAULT_CHART_DIR})"
    )
    parser.add_argument("--addr", default=addr, help="orchestrator host:port")


def _options(args: argparse.Namespace) -> AskOptions:
    # Each option is the flag of the same name (_add_question_options).
    return AskOptions(**{f.name: getattr(args, f.name) for f in dataclasses.fields(AskOptions)})


def _kb(args: argparse.Namespace) -> int:
    if args.kb_command == "reembed":
        return reembed.run(args)
    if args.kb_command == "show":
        return commands.kb_show(args.addr, args.document_id)
    if args.kb_command == "delete":
        return commands.kb_delete(args.addr, args.document_id)
    if args.kb_command == "facts":
        return commands.kb_facts(args.addr, args.document_id)
    flt = retriever_pb2.DocumentFilter(
        origin=render.DOCUMENT_ORIGINS.get(args.origin or "", 0),  # type: ignore[arg-type]
        company=args.company or "",
        language=args.language or "",
    )
    if args.since is not None:
        flt.added_since.FromDatetime(args.since.astimezone(UTC))
    return commands.kb_list(args.addr, flt, args.page_size, args.page_token, args.every)


def _credentials(settings: CliSettings) -> grpc.ChannelCredentials | None:
    """A remote stack's CA (and certificate, token) when configured; else what a local secured `up` left in
    the data dir; else None (plaintext)."""
    if settings.tls_ca_file is not None:
        token = settings.token.get_secret_value() if settings.token else None
        return remote_credentials(settings.tls_ca_file, settings.tls_cert_file, settings.tls_key_file, token)
    return cli_credentials(Path(settings.data_dir))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Plugin commands (the evaluation harness) parse their own options; the CLI never imports them.
    if argv and (code := plugins.run(argv[0], argv[1:])) is not None:
        return code
    if argv[:1] == ["train"]:
        # Training needs torch and sentence-transformers (requirements/gpu-path.txt), imported per command.
        from weaverbird_cli.train.main import main as train_main

        return train_main(argv[1:])
    settings = CliSettings()
    parser = argparse.ArgumentParser(prog="weaverbird", description="WeaverBird financial question answering.")
    sub = parser.add_subparsers(dest="command", required=True)

    p_ask = sub.add_parser("ask", help="ask a question; streams the answer with citations")
    p_ask.add_argument("question")
    _add_question_options(p_ask, settings.orchestrator_addr)
    p_ask.add_argument(
        "--history-file",
        type=Path,
        help="JSON list of earlier {role, text} turns sent with the question; the answer is appended to it",
    )

    p_chat = sub.add_parser("chat", help="a conversation: follow-up questions understood (stdin may be piped)")
    _add_question_options(p_chat, settings.orchestrator_addr)

    p_ingest = sub.add_parser("ingest", help="add files or directories (PDF, HTML, Markdown, text)")
    p_ingest.add_argument("paths", nargs="+")
    p_ingest.add_argument("--addr", default=settings.ingester_addr, help="ingester host:port")

    p_add = sub.add_parser("add", help="save a URL or a file to the knowledge base")
    p_add.add_argument("target", help="http(s) URL or file path")
    p_add.add_argument("--async", dest="asynchronous", action="store_true", help="queue via Kafka, don't wait")
    p_add.add_argument("--addr", default=settings.ingester_addr, help="ingester host:port")

    _add_kb_parser(sub, settings.ingester_addr, settings.retriever_addr)

    sub.add_parser("up", help="start all services locally with the demo knowledge base")
    sub.add_parser("models", help="prepare the local model files")
    plugins.add_parsers(sub)
    sub.add_parser("train", help="data | reranker | encoder | export: models trained on the KB (`weaverbird train -h`)")

    args = parser.parse_args(argv)
    if args.command in ("ask", "chat", "ingest", "add", "kb"):
        commands.use_credentials(_credentials(settings))
    if args.command == "ask":
        return commands.ask(args.question, args.addr, _options(args), args.history_file, settings.history_turns)
    if args.command == "chat":
        return commands.chat(args.addr, _options(args), settings.history_turns)
    if args.command == "ingest":
        return commands.ingest(args.paths, args.addr)
    if args.command == "add":
        return commands.add(args.target, args.addr, args.asynchronous)
    if args.command == "kb":
        return _kb(args)
    if args.command == "up":
        return commands.up(settings)
    path = commands.prepare_model(settings)
    print(f"model ready: {path}" if path else "external generator endpoint configured; nothing to prepare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
