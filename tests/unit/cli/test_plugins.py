"""Plugin subcommands: found through the `weaverbird.commands` entry points, never imported by the CLI."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest
from weaverbird_cli import plugins
from weaverbird_cli.__main__ import main

CALLS: list[list[str]] = []


def _hello(argv: list[str]) -> int:
    CALLS.append(argv)
    return 7


def _only(*points: EntryPoint) -> object:
    def fake(group: str) -> list[EntryPoint]:
        return [p for p in points if p.group == group]

    return fake


def test_the_evaluation_package_registers_eval_in_this_install() -> None:
    # `make install` installs evaluation/ editable; without it `weaverbird eval` would only print a hint.
    assert plugins.installed_commands()["eval"] == "weaverbird_eval.cli:main"


def test_eval_runs_the_harness_with_its_own_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--help"])
    assert exit_info.value.code == 0
    assert "usage: weaverbird eval" in capsys.readouterr().out


def test_a_plugin_gets_its_arguments_and_its_exit_code_is_the_cli_s(monkeypatch: pytest.MonkeyPatch) -> None:
    point = EntryPoint(name="hello", value=f"{__name__}:_hello", group=plugins.COMMAND_GROUP)
    monkeypatch.setattr(plugins, "entry_points", _only(point))
    CALLS.clear()
    assert main(["hello", "--loud", "x"]) == 7
    assert CALLS == [["--loud", "x"]]
    assert plugins.run("ask", []) is None  # not a plugin: the built-in parser handles it


def test_a_missing_known_plugin_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(plugins, "entry_points", _only())
    assert main(["eval", "retrieval"]) == 2
    err = capsys.readouterr().err
    assert "not installed" in err and "-e evaluation" in err


def test_help_lists_installed_and_known_plugins(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point = EntryPoint(name="hello", value=f"{__name__}:_hello", group=plugins.COMMAND_GROUP)
    monkeypatch.setattr(plugins, "entry_points", _only(point))
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"hello from {__name__}:_hello" in out
    assert "eval retrieval | calibrate | answers" in out and "(not installed)" in out
