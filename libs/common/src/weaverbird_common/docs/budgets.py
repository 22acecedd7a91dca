"""Size, markup and time budgets for document extraction (env prefix DOCS_, shared by every service).

Parsing is the one step whose cost an outside party controls: anyone who can add a document or
get a page into the web results chooses the bytes. These limits bound that cost before the work
starts (size, tag count) and while it runs (a time budget that kills the parse).
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

_MIB = 1024 * 1024


class ExtractionBudget(BaseSettings):
    """Limits for one document's extraction; `timeout_s=0` parses in-process without a time limit."""

    model_config = SettingsConfigDict(env_prefix="DOCS_", extra="ignore", env_file=None, frozen=True)

    max_pdf_mb: float = Field(64.0, gt=0, description="Largest PDF accepted, in MiB (a 10-K is 1-10 MiB).")
    # Text limits also bound chunking, which runs after extraction at 0.3-2 s per MiB of text.
    max_html_mb: float = Field(8.0, gt=0, description="Largest HTML page accepted, in MiB.")
    max_text_mb: float = Field(8.0, gt=0, description="Largest Markdown or plain-text file accepted, in MiB.")
    # About 0.12 ms of trafilatura per tag on this hardware: 250,000 tags is a 30 s parse at worst,
    # while long real pages (a 10-K in HTML, with every table cell a tag) stay well below it.
    max_html_tags: int = Field(250_000, gt=0, description="Most start tags an HTML page may have.")
    timeout_s: float = Field(
        60.0, ge=0, description="Seconds one extraction may run before it is killed; 0 = no limit."
    )
    workers: int = Field(2, ge=1, le=32, description="Extraction processes per service (the parallel parses).")

    def max_bytes(self, fmt: str) -> int:
        """The size limit for a format ("pdf", "html", "markdown", "text")."""
        mb = {"pdf": self.max_pdf_mb, "html": self.max_html_mb}.get(fmt, self.max_text_mb)
        return int(mb * _MIB)


@lru_cache(maxsize=1)
def default_budget() -> ExtractionBudget:
    """The budget from the environment, read once per process."""
    return ExtractionBudget()
