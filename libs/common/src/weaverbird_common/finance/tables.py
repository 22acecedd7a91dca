"""Read the concept and metric tables (finance/data/*.yaml): data a reviewer reads without the code."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_table(name: str) -> list[dict[str, Any]]:
    """The rows of data/<name>.yaml, in file order (order decides which concept claims a shared label)."""
    text = resources.files("weaverbird_common.finance").joinpath("data", f"{name}.yaml").read_text("utf-8")
    rows = yaml.load(text, Loader=_LOADER)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise ValueError(f"finance/data/{name}.yaml: expected a list of mappings with an id")
    ids = [r["id"] for r in rows]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"finance/data/{name}.yaml: ids listed twice: {duplicated}")
    return rows


def words(row: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list field as a tuple of strings; YAML would read an unquoted "yes" or "1" as another type."""
    values = row.get(key) or []
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{row['id']}.{key}: every entry must be a string")
    return tuple(values)
