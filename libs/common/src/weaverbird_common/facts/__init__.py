"""Facts read from financial statements: each table row's figure per period, with unit, scale and page.

A filing's statements are where an analyst reads figures: a row label ("Total net sales"), a column
(fiscal 2017), a value and the table's stated scale ("in millions"). `extract.extract_facts` turns the
text the ingester already has (pypdf page text, Markdown pipe tables from HTML) into `Fact`s, so an
answer can look a figure up by company, concept and period instead of asking a model to copy it.
"""

from weaverbird_common.facts.model import Fact, Period

__all__ = ["Fact", "Period"]
