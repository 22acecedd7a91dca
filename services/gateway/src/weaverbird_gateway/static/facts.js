// A document's facts (GET api/documents/{id} -> facts: the figures read from its statement tables) as a
// table, and links to a source's page. Text from the server is set as text, never parsed as markup.
"use strict";

const Facts = (() => {
  const SCALES = {
    en: { 1e3: "thousand", 1e6: "million", 1e9: "billion", 1e4: "万", 1e8: "亿" },
    zh: { 1e3: "千", 1e6: "百万", 1e9: "十亿", 1e4: "万", 1e8: "亿" },
  };

  // A PDF viewer opens "file.pdf#page=41" at that page; a page of a web source is its URL.
  function pageHref(source, page) {
    if (!/^https?:\/\//.test(source || "")) return "";
    return page && /\.pdf(?:$|[?#])/i.test(source) ? `${source}#page=${page}` : source;
  }

  // "p. 41" linked to the source's page when the source is a URL, else the page as text.
  function pageLink(source, page, label) {
    const href = pageHref(source, page);
    const node = document.createElement(href ? "a" : "span");
    node.className = "page-link";
    node.textContent = label;
    if (href) {
      node.href = href;
      node.target = "_blank";
      node.rel = "noopener noreferrer";
    }
    return node;
  }

  // "177,866 million USD", "6.15 USD per share", "21.4 %": the figure as its table prints it.
  function valueText(fact, lang, words) {
    const number = new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en", { maximumFractionDigits: 4 }).format(fact.value);
    if (fact.unit === "percent") return `${number} %`;
    const scale = fact.scale > 1 ? SCALES[lang]?.[fact.scale] ?? SCALES.en[fact.scale] ?? `× ${fact.scale}` : "";
    const tail = fact.unit === "per_share" ? words.perShare : fact.unit === "shares" ? words.shares : "";
    return [number, scale, fact.currency, tail].filter(Boolean).join(" ");
  }

  function cell(row, content, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.append(content);
    row.append(td);
  }

  // Rows for the table body: page (linked), table title, row label as printed, concept, period, value.
  function rows(facts, source, lang, words) {
    return facts.map((fact) => {
      const row = document.createElement("tr");
      cell(row, fact.page ? pageLink(source, fact.page, words.page(fact.page)) : "", "fact-page");
      cell(row, fact.table, "fact-table");
      cell(row, fact.label, "fact-label");
      const concept = document.createElement("code");
      concept.textContent = fact.concept;
      cell(row, fact.concept ? concept : "", "fact-concept");
      cell(row, fact.period, "fact-period");
      cell(row, valueText(fact, lang, words), "fact-value");
      return row;
    });
  }

  return { pageHref, pageLink, rows, valueText };
})();
