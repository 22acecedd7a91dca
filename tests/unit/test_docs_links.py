"""Every relative link in README.md, docs/ and the chart README points at a file that exists, and every
#anchor at a heading of that file, so moving a page or renaming a heading cannot leave a dead link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", REPO / "deploy/helm/weaverbird/README.md", *(REPO / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _anchors(page: Path) -> set[str]:
    """GitHub's heading slugs: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    slugs = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.MULTILINE):
        slugs.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return slugs


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_pages_exist() -> None:
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    for required in (
        "docs/architecture.md",
        "docs/configuration.md",
        "docs/operations.md",
        "docs/security.md",
        "docs/dependencies.md",
        "docs/experiments.md",
        "docs/results/answers.md",
    ):
        assert required in names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    dead = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            dead.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            dead.append(f"{target}: no heading #{anchor} in {file.relative_to(REPO)}")
    assert not dead, f"dead links in {page.relative_to(REPO)}: {dead}"


def test_readme_stays_the_front_door() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250, "README.md is the front door; move detail into docs/"
    # CI (.ci/run) runs README's test command, and the demo tests ask README's two questions.
    assert "make test" in readme and "make run" in readme
    assert "What was Northwind Robotics' revenue in fiscal 2024?" in readme
    assert "青松新能源2024年的营业收入是多少？" in readme
    assert "docs/dependencies.md" in readme
