"""Read the concept and metric tables (finance/data/): data a reviewer reads without the code.

A table is one file, data/<name>.yaml, or a folder of them, data/<name>/*.yaml, read in file-name order
and joined (the concept table is split by statement so each part stays short).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parts(name: str) -> list[tuple[str, Traversable]]:
    data = resources.files("weaverbird_common.finance").joinpath("data")
    folder = data.joinpath(name)
    if folder.is_dir():
        files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
        if not files:
            raise ValueError(f"finance/data/{name}/: no .yaml files")
        return [(f"finance/data/{name}/{f.name}", f) for f in files]
    return [(f"finance/data/{name}.yaml", data.joinpath(f"{name}.yaml"))]


def read_table(name: str) -> list[dict[str, Any]]:
    """The rows of the table, in file order (order decides which concept claims a shared label)."""
    rows: list[dict[str, Any]] = []
    where: dict[str, list[str]] = {}
    for path, part in _parts(name):
        part_rows = yaml.load(part.read_text("utf-8"), Loader=_LOADER)
        if not isinstance(part_rows, list) or not all(
            isinstance(r, dict) and isinstance(r.get("id"), str) for r in part_rows
        ):
            raise ValueError(f"{path}: expected a list of mappings, each with a string id")
        for row in part_rows:
            where.setdefault(row["id"], []).append(path)
        rows.extend(part_rows)
    duplicated = {i: files for i, files in where.items() if len(files) > 1}
    if duplicated:
        listed = "; ".join(f"{i} in {', '.join(files)}" for i, files in sorted(duplicated.items()))
        raise ValueError(f"finance/data/{name}: ids listed twice: {listed}")
    return rows


def words(row: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list field as a tuple of strings; YAML would read an unquoted "yes" or "1" as another type."""
    values = row.get(key) or []
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{row['id']}.{key}: every entry must be a string")
    return tuple(values)
