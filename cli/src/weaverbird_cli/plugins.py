"""Subcommands other distributions add to `weaverbird`, found through entry points so the CLI never
imports them: the evaluation harness (evaluation/pyproject.toml declares `eval`) is one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points

COMMAND_GROUP = "weaverbird.commands"

PluginMain = Callable[[list[str]], int]


@dataclass(frozen=True, slots=True)
class KnownPlugin:
    """A plugin the project ships, named in `weaverbird -h` and explained when it is not installed."""

    help: str
    install: str


KNOWN_PLUGINS: dict[str, KnownPlugin] = {
    "eval": KnownPlugin(
        help="retrieval | calibrate | answers on ../shared/data (see `weaverbird eval -h`)",
        install="pip install -r requirements/eval.txt && pip install --no-deps -e evaluation",
    ),
}


def installed_commands() -> dict[str, str]:
    """Command name -> the `module:function` an installed distribution registers for it."""
    return {ep.name: ep.value for ep in entry_points(group=COMMAND_GROUP)}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """One help line per plugin command, installed or known, so `weaverbird -h` lists them all."""
    installed = installed_commands()
    for name in sorted(set(installed) | set(KNOWN_PLUGINS)):
        known = KNOWN_PLUGINS.get(name)
        text = known.help if known else f"from {installed[name]}"
        if name not in installed:
            text += " (not installed)"
        sub.add_parser(name, help=text, add_help=False)


def run(name: str, argv: list[str]) -> int | None:
    """Runs plugin command `name` with its own arguments; None when `name` is no plugin command. A known
    plugin that is not installed says how to install it (exit 2)."""
    matches = [ep for ep in entry_points(group=COMMAND_GROUP) if ep.name == name]
    if matches:
        command: PluginMain = matches[0].load()
        return command(argv)
    if name in KNOWN_PLUGINS:
        print(
            f"`weaverbird {name}` comes from a separate package that is not installed here; install it "
            f"from the repository root with: {KNOWN_PLUGINS[name].install}",
            file=sys.stderr,
        )
        return 2
    return None
