"""The CLI's chart PNG: each chart type drawn from the proto spec or the orchestrator's dataclass, Chinese
labels with a CJK font, and specs that cannot be drawn refused."""

from __future__ import annotations

import logging
import struct
import warnings
from pathlib import Path

import pytest
from matplotlib import image
from weaverbird.v1 import orchestrator_pb2
from weaverbird_cli import charts
from weaverbird_cli.charts import cjk_font, write_chart_png
from weaverbird_orchestrator.tasks.chart import ChartSeries, ChartSpec

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _inked_share(path: Path) -> float:
    """Share of pixels that are not (near) white: something was drawn."""
    pixels = image.imread(path)[..., :3]
    return float((pixels.min(axis=-1) < 0.9).mean())


def _dataclass_spec(chart_type: str, chinese: bool) -> ChartSpec:
    if chinese:
        categories = ("第一产业", "第二产业", "第三产业")
        series = (ChartSeries("增加值", (1376.4, 10373.4, 11903.4), (1,)),)
        return ChartSpec(chart_type, "江西前三季度三大产业增加值", categories, series, "产业", "亿元", "亿元")
    categories = ("2019", "2020", "2021")
    series = (ChartSeries("Revenue", (702.15, 760.9, 812.4), (1,)), ChartSeries("Costs", (611.0, 640.2, 699.9)))
    if chart_type == "pie":
        series = series[:1]
    return ChartSpec(chart_type, "Revenue and costs", categories, series, "Fiscal year", "", "$ millions")


def _proto_spec(chart_type: str) -> orchestrator_pb2.ChartSpec:
    return orchestrator_pb2.ChartSpec(
        type=chart_type,
        title="Sales mix",
        categories=["Retail", "Wholesale", "Online"],
        series=[orchestrator_pb2.ChartSeries(name="Share", values=[52.6, 35.8, 11.6], passages=[2])],
        unit="%",
    )


@pytest.mark.parametrize("chart_type", ["bar", "line", "pie"])
@pytest.mark.parametrize("chinese", [False, True], ids=["en", "zh"])
def test_each_type_writes_a_png_of_the_expected_size(tmp_path: Path, chart_type: str, chinese: bool) -> None:
    path = write_chart_png(_dataclass_spec(chart_type, chinese), tmp_path / "nested" / f"{chart_type}.png")
    assert path == tmp_path / "nested" / f"{chart_type}.png"
    assert _size(path) == (960, 576)
    assert path.stat().st_size > 10_000
    assert 0.02 < _inked_share(path) < 0.9


@pytest.mark.parametrize("chart_type", ["bar", "line", "pie"])
def test_the_proto_spec_is_drawn_too(tmp_path: Path, chart_type: str) -> None:
    path = write_chart_png(_proto_spec(chart_type), tmp_path / "chart.png")
    assert _size(path) == (960, 576) and _inked_share(path) > 0.02


def test_the_chart_types_look_different(tmp_path: Path) -> None:
    drawn = {t: write_chart_png(_proto_spec(t), tmp_path / f"{t}.png").read_bytes() for t in ("bar", "line", "pie")}
    assert len(set(drawn.values())) == 3


def test_chinese_labels_use_a_cjk_font_without_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    font = cjk_font()
    if font is None:
        pytest.skip("no font with Chinese glyphs installed (fonts-noto-cjk / fonts-wqy-microhei)")
    # matplotlib warns "Glyph ... missing from font(s)" for every character it draws as a box.
    with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_chart_png(_dataclass_spec("pie", chinese=True), tmp_path / "zh.png")
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert not [r for r in caplog.records if r.name == "weaverbird_cli.charts"]


def test_without_a_cjk_font_the_chart_is_still_written_and_a_warning_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(charts, "cjk_font", lambda: None)
    with caplog.at_level(logging.WARNING, logger="weaverbird_cli.charts"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-glyph warnings this test provokes
        path = write_chart_png(_dataclass_spec("bar", chinese=True), tmp_path / "zh.png")
    assert _size(path) == (960, 576)
    assert any("Chinese" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (ChartSpec("radar", "t", ("a",), (ChartSeries("s", (1.0,)),)), "unknown chart type"),
        (ChartSpec("bar", "t", (), ()), "no categories"),
        (ChartSpec("bar", "t", ("a", "b"), (ChartSeries("s", (1.0,)),)), "1 values for 2 categories"),
        (ChartSpec("line", "t", ("a",), (ChartSeries("s", (float("nan"),)),)), "finite"),
        (ChartSpec("pie", "t", ("a", "b"), (ChartSeries("s", (3.0, -1.0)),)), "non-negative"),
    ],
)
def test_specs_that_cannot_be_drawn_are_refused(tmp_path: Path, spec: ChartSpec, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        write_chart_png(spec, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()
