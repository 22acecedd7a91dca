"""The fact record and the period it describes, with the payload form the KB stores."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Period:
    """One column of a statement: a fiscal year (and quarter), a duration or an as-of date.

    months: 12 for a fiscal year, 3/6/9 for "three/six/nine months ended", 0 for a balance (as of the
    period end). end: "YYYY-MM-DD" when the header names the month and day, else "".
    """

    fiscal_year: int
    months: int = 12
    quarter: int = 0
    end: str = ""

    def label(self) -> str:
        """How the period is shown to a reader: FY2017, Q3 2024, 9M 2024, as of 2019-05-31 ("date not
        stated" for a schedule that names none: fiscal year 0)."""
        if not self.fiscal_year and not self.end:
            return "date not stated"
        if self.months == 0:
            return f"as of {self.end}" if self.end else f"FY{self.fiscal_year} year end"
        if self.months == 3 and self.quarter:
            return f"Q{self.quarter} {self.fiscal_year}"
        if self.months in (6, 9):
            return f"{self.months}M {self.fiscal_year}"
        return f"FY{self.fiscal_year}"


@dataclass(frozen=True)
class Fact:
    """One figure of one statement row for one period.

    value is as printed (signed: parentheses are negative, a dash is 0); scale is the multiplier the
    table states (1e6 for "in millions", 1e4 for 万元), so value * scale is the amount in `currency`.
    unit: "currency", "per_share", "percent", "shares" or "number".
    """

    document_id: str
    company: str
    page: int | None
    table: str
    statement: str
    label: str
    concept: str
    period: Period
    value: float
    scale: float = 1.0
    unit: str = "currency"
    currency: str = ""
    scale_text: str = ""
    # The document's title and source (path or URL), so a figure can be cited without another lookup.
    title: str = ""
    source: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def amount(self) -> float:
        """The figure in base units (value times the stated scale)."""
        return self.value * self.scale

    def payload(self) -> dict[str, Any]:
        """Flat payload for the KB (Qdrant payload values: str / int / float)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("period", "extra")}
        out["page"] = self.page or 0
        out["fiscal_year"] = self.period.fiscal_year
        out["months"] = self.period.months
        out["quarter"] = self.period.quarter
        out["period_end"] = self.period.end
        return out

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Fact:
        period = Period(
            fiscal_year=int(payload.get("fiscal_year", 0)),
            months=int(payload.get("months", 12)),
            quarter=int(payload.get("quarter", 0)),
            end=str(payload.get("period_end", "")),
        )
        page = int(payload.get("page", 0)) or None
        return cls(
            document_id=str(payload.get("document_id", "")),
            company=str(payload.get("company", "")),
            page=page,
            table=str(payload.get("table", "")),
            statement=str(payload.get("statement", "")),
            label=str(payload.get("label", "")),
            concept=str(payload.get("concept", "")),
            period=period,
            value=float(payload.get("value", 0.0)),
            scale=float(payload.get("scale", 1.0)),
            unit=str(payload.get("unit", "currency")),
            currency=str(payload.get("currency", "")),
            scale_text=str(payload.get("scale_text", "")),
            title=str(payload.get("title", "")),
            source=str(payload.get("source", "")),
        )
