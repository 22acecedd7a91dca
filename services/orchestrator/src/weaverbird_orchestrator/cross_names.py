"""A company named in the other language than the catalog files it under: "亚马逊" for AMAZON, "Tencent"
for 腾讯控股.

The catalog knows each company by the names its documents use, in their language. The general source of
names in the other language is the model (generator task "company_name"): the project found no offline
list of companies' English and Chinese names to install. The reply is only a candidate: it counts when it
matches a catalog company as any question's wording would, and when the model, asked the other way
about the name it gave, gives the question's name back ("亚马逊" -> "Amazon" -> "亚马逊"). Measured with
Qwen2.5-Coder-1.5B through the generator (docs/architecture.md, "Names across languages"): of 20 Chinese names of US
issuers the round trip accepted 15, all right, and turned away the wrong one (百事 -> "Pepperidge Farm");
of 10 English names of Chinese issuers it accepted 4, all right, and turned away both wrong ones
(China Merchants Bank -> 中国银行). Two short calls per new name, remembered; only for a question that
names no catalog company, and only when the catalog holds companies of the other language.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from weaverbird_common.coverage import company_names, name_candidates
from weaverbird_common.questions import CJK_RE, filters_from_question, normalize_company
from weaverbird_common.zh_names import chinese_names

from weaverbird_orchestrator.tasks.llm import Generator, complete

log = logging.getLogger(__name__)

_NAMES_PER_QUESTION = 2  # the question's likeliest names; each costs one short call the first time
_REMEMBERED = 4096


class CrossLanguageNames:
    """Finds the catalog company a question names in the other language (module docstring)."""

    def __init__(self, generator: Generator) -> None:
        self._generator = generator
        self._said: dict[tuple[str, str], str] = {}

    async def translated(self, name: str, language: str) -> str:
        """The model's name for `name` in `language` ("en" or "zh"); "" when the call fails."""
        key = (name, language)
        if key not in self._said:
            try:
                completion = await complete(self._generator, "company_name", name, (), language, max_tokens=16)
            except Exception as exc:  # any peer error: the question goes on without the name
                log.warning("no %s name for %r: %s", language, name, exc)
                return ""
            if len(self._said) >= _REMEMBERED:
                self._said.pop(next(iter(self._said)))
            self._said[key] = completion.text.strip().splitlines()[0].strip() if completion.text.strip() else ""
        return self._said[key]

    async def company(self, question: str, language: str, companies: Iterable[str], aliases: Mapping[str, str]) -> str:
        """The catalog company the question names in the other language, or ""."""
        known = list(companies)
        chinese_filed = any(CJK_RE.search(c) for c in [*known, *aliases])
        latin_filed = any(not CJK_RE.search(c) for c in known)
        if language == "zh" and latin_filed:
            names, target = chinese_names(question), "en"
        elif language == "en" and chinese_filed:
            names, target = [*company_names(question), *name_candidates(question)], "zh"
        else:
            return ""
        for name in list(dict.fromkeys(names))[:_NAMES_PER_QUESTION]:
            other = await self.translated(name, target)
            if not other or other == name:
                continue
            found = filters_from_question(other, known, aliases=aliases).get("company")
            back = await self.translated(other, language) if found else ""
            if found and _same_name(back, name):
                log.info("%r names %s (as %r)", name, found, other)
                return str(found)
            if found:
                log.info("%r -> %r -> %r: not the same company, ignored", name, other, back)
        return ""


def _same_name(a: str, b: str) -> bool:
    """Whether two writings name the same company: equal, or one inside the other once spaces and
    punctuation go ("苹果" and "苹果公司", "Johnson & Johnson" and "Johnson and Johnson" do not)."""
    x, y = normalize_company(a), normalize_company(b)
    return bool(x and y) and (x == y or (min(len(x), len(y)) >= 2 and (x in y or y in x)))
