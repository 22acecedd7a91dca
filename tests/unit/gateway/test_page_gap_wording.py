"""The page says every coverage gap in Chinese: a gap kind without its `gap_<kind>` text would show the
orchestrator's English note to a Chinese reader."""

from __future__ import annotations

import re
from pathlib import Path

from weaverbird_common.coverage import GAP_KINDS

APP = Path(__file__).resolve().parents[3] / "services/gateway/src/weaverbird_gateway/static/app.js"


def test_every_gap_kind_has_its_chinese_wording() -> None:
    written = set(re.findall(r"\bgap_(\w+):", APP.read_text(encoding="utf-8")))
    assert set(GAP_KINDS) <= written, sorted(set(GAP_KINDS) - written)
