"""Query-focused context: the units that answer the question survive the cut, numbering and labels intact."""

from __future__ import annotations

import pytest
from weaverbird_common.docs.chunker import count_tokens
from weaverbird_generator.context_focus import GAP, focus, terms
from weaverbird_generator.prompt import Passage

RESULTS = """Northwind Robotics, a maker of industrial robots, reported results for fiscal year 2024, which \
ended on 31 December 2024. The board met four times during the year and approved the strategy.

- Revenue: USD 1,284.6 million, up 16.5% from USD 1,102.9 million in fiscal 2023.
- Net income: USD 97.3 million, up 23.3% from USD 78.9 million.
- Gross margin: 41.2%.

## Results by quarter

| Quarter | Revenue (USD million) | Net income (USD million) |
|---|---|---|
| Q1 2024 | 281.4 | 18.6 |
| Q2 2024 | 309.7 | 22.9 |
| Q3 2024 | 328.2 | 25.1 |
"""

OUTLOOK = """Management discussed hiring plans, the new headquarters lease and the sustainability programme in \
detail with analysts on the call. For fiscal 2025 the company expects capital expenditures of about USD 60 \
million. Employees numbered 4,120 at year end, of whom 38% worked in research and development."""

PDF_PAGE = """CONSOLIDATED STATEMENT OF INCOME
(Millions, except per share amounts)
2018 2017 2016
Net sales $ 32,765 $ 31,657 $ 30,109
Cost of sales 16,682 16,055 15,118
Selling, general and administrative expenses 7,602 6,626 6,311
Research, development and related expenses 1,821 1,870 1,764
Total operating expenses 25,733 24,551 23,193
Operating income 7,207 7,820 7,223
Interest expense 350 322 199"""

PASSAGES = [
    Passage(1, "Northwind Robotics FY2024 Annual Results", RESULTS, "demo/kb/northwind.md"),
    Passage(2, "Northwind Robotics FY2024 Annual Results / Outlook", OUTLOOK, "demo/kb/northwind.md"),
]


def test_terms_stem_numbers_and_chinese_bigrams() -> None:
    t = terms("What were Northwind's revenues in FY2024? 营业收入")
    assert {"revenu", "2024", "营业", "收入"} <= t
    assert "what" not in t and "were" not in t


def test_the_sentence_with_the_asked_metric_survives_and_the_rest_is_cut() -> None:
    out = focus("What was Northwind Robotics' revenue in fiscal 2024?", PASSAGES, budget_tokens=60)
    text = "\n".join(p.text for p in out)
    assert "USD 1,284.6 million" in text
    assert "board met four times" not in text  # names the company and year, but not the metric
    assert sum(count_tokens(p.text) for p in out) <= 60


def test_numbers_titles_and_sources_are_kept_and_passages_without_relevance_dropped() -> None:
    out = focus("What was Northwind Robotics' revenue in fiscal 2024?", PASSAGES, budget_tokens=60)
    assert [p.number for p in out] == [1]  # the outlook passage says nothing about revenue
    assert out[0].title == PASSAGES[0].title and out[0].source == PASSAGES[0].source


def test_a_table_row_comes_with_its_header_row() -> None:
    out = focus("What was the net income in Q2 2024?", PASSAGES, budget_tokens=80)
    text = out[0].text
    assert "| Q2 2024 | 309.7 | 22.9 |" in text
    header = "| Quarter | Revenue (USD million) | Net income (USD million) |"
    assert header in text and text.index(header) < text.index("| Q2 2024 |")
    assert "|---|" not in text


def test_a_pdf_row_comes_with_the_line_of_column_years() -> None:
    pdf = [Passage(3, "3M_2018_10K", PDF_PAGE, "3M_2018_10K.pdf, page 60")]
    out = focus("What was 3M's operating income in FY2018?", pdf, budget_tokens=30)
    text = out[0].text
    assert "Operating income 7,207 7,820 7,223" in text
    assert text.index("2018 2017 2016") < text.index("Operating income")
    assert "Cost of sales" not in text


def test_gaps_are_marked_and_kept_units_stay_in_order() -> None:
    out = focus("revenue and gross margin", PASSAGES, budget_tokens=70)
    text = out[0].text
    assert text.index("Revenue: USD") < text.index("Gross margin")
    assert GAP in text  # units between them or after were left out


def test_no_budget_or_a_short_context_is_returned_unchanged() -> None:
    assert focus("revenue?", PASSAGES, budget_tokens=0) == PASSAGES
    assert focus("revenue?", PASSAGES, budget_tokens=10_000) == PASSAGES


def test_without_shared_terms_each_passage_keeps_its_start() -> None:
    # A Chinese question over English passages shares no term: better the start of each than nothing.
    out = focus("这家公司的总部在哪里？", PASSAGES, budget_tokens=40)
    assert [p.number for p in out] == [1, 2]
    assert out[0].text.startswith("Northwind Robotics, a maker")
    assert all(count_tokens(p.text) <= 25 for p in out)


def test_figures_on_lines_of_their_own_stay_with_their_label() -> None:
    # pypdf often breaks a balance-sheet row into the label, "$" and each column's figure.
    page = "Current assets:\nCash and cash equivalents\n$\n4,835 \n$\n2,535 \nShort-term investments\n1,020 \n1,073 \n"
    out = focus("What were AMD's cash and cash equivalents?", [Passage(1, "AMD_2022_10K", page, "s")], 20)
    assert out[0].text.startswith("Cash and cash equivalents $ 4,835 $ 2,535")
    assert "Short-term" not in out[0].text


def test_a_chinese_question_finds_the_english_line_through_the_glossary() -> None:
    out = focus("Northwind Robotics 2024财年的净利润是多少？", PASSAGES, budget_tokens=40)
    assert "Net income: USD 97.3 million" in out[0].text
    assert "Revenue: USD" not in out[0].text


def test_quarters_match_across_languages() -> None:
    assert {"§q3", "§net_income"} <= terms("Harbor Bay Bank 2024年第三季度的净利润是多少？")
    assert {"§q3", "§net_income"} <= terms("Net income in the third quarter (Q3 2024)")


def test_a_ratio_keeps_the_rows_it_is_computed_from() -> None:
    # "quick ratio" shares no word with the rows it is computed from; the glossary names them.
    sheet = (
        "Goodwill 1,204 1,180\n"
        "Deferred income taxes 311 290\n"
        "Operating lease assets 845 812\n"
        "Other long-term liabilities 1,020 990\n"
        "Retained earnings 12,400 11,900\n"
        "Total current assets 9,210 8,544\n"
        "Total current liabilities 4,130 4,020"
    )
    out = focus("What was Acme's quick ratio in 2022?", [Passage(1, "ACME_2022_10K", sheet, "s")], 20)
    assert "Total current assets 9,210" in out[0].text
    assert "Total current liabilities 4,130" in out[0].text
    assert "Goodwill" not in out[0].text


def test_a_headline_that_restates_the_question_keeps_its_passage_and_the_answering_sentence() -> None:
    # Fin-Eva-style news: the title (the headline) holds nearly every term of the question. Counting those
    # terms as nothing inside the passage dropped it from the prompt and the model refused.
    news = Passage(
        1,
        "德必集团：目前70%-80%的项目都属于旧楼改造",
        "【 德必集团：目前70%-80%的项目都属于旧楼改造】财联社 7月27日电，德必集团在互动平台表示，公司响应政府政策，"
        "利用城市历史建筑、工业遗产、旧厂房、旧街区、旧仓库等存量空间发展文化产业，促进城市更新和产业升级，"
        "助力老工业城市和资源型城市转型。目前，公司70%-80%的项目都属于旧楼改造，持续拓展并稳定输出城市更新项目。",
        "fineva/1",
    )
    other = Passage(
        2,
        "杨文杰卸任碧桂园地产法定代表人",
        "【杨文杰卸任碧桂园地产法定代表人】财联社10月20日电，天眼查显示，近日，碧桂园地产集团有限公司发生工商变更，"
        "法定代表人由杨文杰变更为简暖棠。目前，杨文杰任该公司总经理，杨惠妍任董事长。集团表示经营正常，"
        "各项目交付有序推进，目前已完成多个项目的保交楼任务。",
        "fineva/2",
    )
    out = focus("德必集团目前多少项目属于旧楼改造？", [news, other], budget_tokens=100)
    assert out[0].number == 1
    assert "公司70%-80%的项目都属于旧楼改造" in out[0].text


@pytest.mark.parametrize(
    ("question", "passage", "kept", "dropped"),
    [
        pytest.param(
            "青松新能源2024年的营业收入是多少？",
            Passage(
                1,
                "青松新能源2024年年度业绩",
                "青松新能源主要从事光伏组件业务。\n- 营业收入：86.47亿元，同比增长19.8%。\n- 研发投入：4.12亿元。\n"
                "公司计划在2025年扩大储能产能，并在海外新建两座工厂以服务欧洲和东南亚市场的客户需求。",
                "zh.md",
            ),
            "86.47亿元",
            "海外新建两座工厂",
            id="chinese question over a chinese passage",
        ),
        pytest.param(
            "What were Contoso's capital expenditures in FY2023?",
            Passage(
                1,
                "Contoso FY2023 10-K",
                "Contoso Corporation filed this annual report for fiscal year 2023 with the Commission on 1 March 2024 "
                "and Contoso Corporation's board approved it.\nDividends declared per share were USD 0.42 in 2023.\n"
                "Capital expenditures were USD 812 million in fiscal 2023, mostly for new stores.",
                "contoso-2023.pdf",
            ),
            "USD 812 million",
            "filed this annual report",
            # A cover sentence naming the title's company and year still loses to the metric.
            id="cover sentence loses to the metric",
        ),
    ],
)
def test_the_sentence_with_the_asked_figure_fills_a_small_budget(
    question: str, passage: Passage, kept: str, dropped: str
) -> None:
    out = focus(question, [passage], budget_tokens=25)
    assert kept in out[0].text
    assert dropped not in out[0].text
