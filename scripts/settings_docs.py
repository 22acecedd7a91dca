"""Generate docs/configuration.md from the settings classes, so the documented settings cannot drift.

    .venv/bin/python -m scripts.settings_docs > docs/configuration.md   # regenerate
    .venv/bin/python -m scripts.settings_docs --check                   # exit 1 if the file is stale

Every row comes from a pydantic-settings class: the variable name from its env prefix (or alias), the
type from the annotation, the default from the field, the text from the Field description.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import types
import typing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parent.parent
DOC_PATH = REPO / "docs" / "configuration.md"
COMMAND = ".venv/bin/python -m scripts.settings_docs > docs/configuration.md"
BASE_CLASS = ("weaverbird_common.settings", "BaseServiceSettings")


@dataclass(frozen=True)
class Section:
    """One table of the page: a settings class, and the prefix its variables carry."""

    title: str
    module: str
    cls: str
    intro: str


SECTIONS: tuple[Section, ...] = (
    Section(
        "Every gRPC service",
        *BASE_CLASS,
        "Shared by embedder, retriever, generator, orchestrator and ingester (`weaverbird_common.settings`). "
        "`<SVC>` is the service's prefix: `EMBEDDER`, `RETRIEVER`, `GENERATOR`, `ORCHESTRATOR`, `INGESTER`. "
        "A service's own table repeats a shared setting only where it changes the default.",
    ),
    Section(
        "Document extraction (every service that parses documents)",
        "weaverbird_common.docs.budgets",
        "ExtractionBudget",
        "Size, markup and time budgets for parsing a document (`weaverbird_common.docs.budgets`).",
    ),
    Section("Embedder", "weaverbird_embedder.settings", "EmbedderSettings", ""),
    Section("Retriever", "weaverbird_retriever.settings", "RetrieverSettings", ""),
    Section("Generator", "weaverbird_generator.settings", "GeneratorSettings", ""),
    Section("Orchestrator", "weaverbird_orchestrator.settings", "OrchestratorSettings", ""),
    Section("Ingester", "weaverbird_ingester.settings", "IngesterSettings", ""),
    Section(
        "Gateway (HTTP)",
        "weaverbird_gateway.settings",
        "GatewaySettings",
        "The HTTP gateway is not a gRPC service: it does not share the table above.",
    ),
    Section(
        "CLI and the local stack (`weaverbird`, `make run`)",
        "weaverbird_cli.settings",
        "CliSettings",
        "",
    ),
)


def _load(module: str, cls: str) -> type[BaseModel]:
    return getattr(importlib.import_module(module), cls)


def _type_name(annotation: Any) -> str:
    """A short readable type: `int`, `str | None`, `list[str]`, `a | b` for a Literal."""
    if annotation is None or annotation is type(None):
        return "None"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        inner = ", ".join(_type_name(a) for a in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "*required*"
    else:
        value = field.default
    if value is None:
        return "—"
    if isinstance(value, SecretStr):
        return "(secret)"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return '`""`'
    if isinstance(value, (list, tuple, dict, set)) and not value:
        return "`[]`" if not isinstance(value, dict) else "`{}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _env_name(prefix: str, name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    if isinstance(alias, str):
        return alias
    return f"{prefix}{name}".upper()


def _is_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside `Model` or `Model | None` (nested settings such as Kafka), else None."""
    candidates = typing.get_args(annotation) or (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _rows(cls: type[BaseModel], prefix: str, skip: dict[str, FieldInfo]) -> list[str]:
    delimiter = cls.model_config.get("env_nested_delimiter") or ""
    rows: list[str] = []
    for name, field in cls.model_fields.items():
        base = skip.get(name)
        if base is not None and _default(base) == _default(field) and base.description == field.description:
            continue  # a shared setting this service leaves as it is
        nested = _is_model(field.annotation)
        if nested is not None and delimiter:
            rows.append(
                f"| `{_env_name(prefix, name, field)}__*` | {nested.__name__} | {_default(field)} "
                f"| {_cell(field.description or '')} The variables below set it. |"
            )
            nested_prefix = f"{prefix}{name}{delimiter}"
            for sub_name, sub in nested.model_fields.items():
                default = _default(sub).replace("*required*", "*required in the group*")
                rows.append(
                    f"| `{_env_name(nested_prefix, sub_name, sub)}` | {_cell(_type_name(sub.annotation))} "
                    f"| {default} | {_cell(sub.description or '')} |"
                )
            continue
        rows.append(
            f"| `{_env_name(prefix, name, field)}` | {_cell(_type_name(field.annotation))} "
            f"| {_default(field)} | {_cell(field.description or '')} |"
        )
    return rows


def render() -> str:
    """The whole page, as it must stand in docs/configuration.md."""
    base_cls = _load(*BASE_CLASS)
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from the settings classes; do not edit by hand. Regenerate with:",
        f"     {COMMAND}",
        "     tests/unit/test_configuration_docs.py fails when this page and the classes differ. -->",
        "",
        "Every service reads typed settings from its environment once, at start (pydantic-settings). A",
        "variable is the service's prefix and the setting's name in capitals; nested groups (Kafka) join",
        "with `__`. Lists are JSON (`'[\"a\", \"b\"]'`). In the Helm chart the same variables are set from",
        "`values.yaml` (see [operations](operations.md)).",
        "",
    ]
    for section in SECTIONS:
        cls = _load(section.module, section.cls)
        is_base = (section.module, section.cls) == BASE_CLASS
        prefix = "<SVC>_" if is_base else str(cls.model_config.get("env_prefix") or "")
        skip = {} if is_base or not issubclass(cls, base_cls) else dict(base_cls.model_fields)
        doc = _cell((cls.__doc__ or "").strip().split("\n\n")[0])
        lines += [f"## {section.title}", ""]
        lines += [f"`{section.module}.{section.cls}`: {doc}", ""] if doc else []
        lines += [section.intro, ""] if section.intro else []
        lines += ["| variable | type | default | meaning |", "|---|---|---|---|"]
        lines += _rows(cls, prefix, skip)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with docs/configuration.md instead of printing")
    args = parser.parse_args(argv)
    text = render()
    if not args.check:
        sys.stdout.write(text)
        return 0
    if DOC_PATH.exists() and DOC_PATH.read_text(encoding="utf-8") == text:
        return 0
    print(f"docs/configuration.md is out of date with the settings classes; run: {COMMAND}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
