// Draws an answer's chart (done.chart, a ChartSpec: type bar | line | pie, title, categories, series of
// {name, values, passages}, x_label, y_label, unit) as inline SVG. No library: axes, ticks, bars, lines,
// pie slices and the legend are drawn here. Text from the server is set as text, never parsed as markup.
"use strict";

const Charts = (() => {
  const SVG = "http://www.w3.org/2000/svg";
  // Distinguishable for common colour-vision deficiencies (Okabe-Ito order), dark enough on white.
  const PALETTE = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#8a6d00", "#555555"];
  const FONT = 12; // px, as shown: the drawing is sized to its container, not scaled down
  let drawn = 0;

  const color = (i) => PALETTE[i % PALETTE.length];

  // "12.5%" but "1,284.6 USD million".
  function withUnit(number, unit) {
    if (!unit) return number;
    return unit === "%" || unit === "％" ? `${number}${unit}` : `${number} ${unit}`;
  }

  function el(name, attrs = {}, text = null) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (text !== null) node.textContent = text;
    return node;
  }

  function tooltip(node, text) {
    node.append(el("title", {}, text));
    return node;
  }

  // Why the spec cannot be drawn, or "" when it can (the same checks as the CLI's PNG writer).
  function problem(spec) {
    const type = (spec.type || "bar").toLowerCase();
    if (!["bar", "line", "pie"].includes(type)) return `unknown chart type “${spec.type}”`;
    if (!spec.categories?.length || !spec.series?.length) return "no categories or no series";
    for (const s of spec.series) {
      if (s.values.length !== spec.categories.length) {
        return `series “${s.name}” has ${s.values.length} values for ${spec.categories.length} categories`;
      }
      if (!s.values.every(Number.isFinite)) return `series “${s.name}” has a value that is not a number`;
    }
    if (type === "pie") {
      const values = spec.series[0].values;
      if (values.some((v) => v < 0) || values.reduce((a, b) => a + b, 0) <= 0) {
        return "a pie chart needs non-negative values with a positive total";
      }
    }
    return "";
  }

  // About `count` round tick values covering [low, high] (1, 2, 2.5, 5 x 10^n steps).
  function ticks(low, high, count = 5) {
    if (low === high) {
      const pad = Math.abs(low) || 1;
      low -= pad;
      high += pad;
    }
    const raw = (high - low) / count;
    const power = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
    const first = Math.floor(low / step) * step;
    const values = [];
    for (let v = first; v <= high + step * 1e-9; v += step) values.push(Number(v.toPrecision(12)));
    if (values[values.length - 1] < high) values.push(Number((values[values.length - 1] + step).toPrecision(12)));
    return values;
  }

  function compact(value, locale) {
    return new Intl.NumberFormat(locale, { notation: Math.abs(value) >= 1e6 ? "compact" : "standard", maximumFractionDigits: 2 }).format(value);
  }

  function shortLabel(text, most = 16) {
    return text.length > most ? `${text.slice(0, most - 1)}…` : text;
  }

  function axes(spec, width, height, locale) {
    const values = spec.series.flatMap((s) => s.values);
    const scale = ticks(Math.min(0, ...values), Math.max(0, ...values));
    const low = scale[0];
    const high = scale[scale.length - 1];
    const longest = Math.max(...spec.categories.map((c) => Math.min(c.length, 16)));
    const left = 14 + FONT * 0.62 * Math.max(...scale.map((v) => compact(v, locale).length)) + (spec.y_label || spec.unit ? FONT + 8 : 0);
    const plotWidth = width - left - 12;
    const slot = plotWidth / spec.categories.length;
    const rotate = longest * FONT * 0.6 > slot - 4;
    const bottom = (rotate ? 12 + longest * FONT * 0.45 : FONT + 14) + (spec.x_label ? FONT + 10 : 0);
    const top = FONT + 8; // room for the value label over the tallest bar
    const plotHeight = height - top - bottom;
    const y = (v) => top + plotHeight * (1 - (v - low) / (high - low));
    return { scale, left, top, bottom, plotWidth, plotHeight, slot, rotate, y };
  }

  function drawAxes(svg, spec, box, width, height, locale) {
    const { scale, left, top, plotWidth, plotHeight, slot, rotate, y } = box;
    const grid = el("g", { class: "chart-grid" });
    for (const v of scale) {
      grid.append(el("line", { x1: left, x2: left + plotWidth, y1: y(v), y2: y(v), stroke: v === 0 ? "#333" : "#ddd" }));
      grid.append(el("text", { x: left - 6, y: y(v) + FONT * 0.35, "text-anchor": "end", "font-size": FONT, fill: "#333" }, compact(v, locale)));
    }
    grid.append(el("line", { x1: left, x2: left, y1: top, y2: top + plotHeight, stroke: "#333" }));
    svg.append(grid);
    const labels = el("g", { class: "chart-categories" });
    spec.categories.forEach((category, i) => {
      const x = left + slot * (i + 0.5);
      const baseline = top + plotHeight + FONT + 4;
      const text = el("text", rotate
        ? { x, y: baseline, "text-anchor": "end", transform: `rotate(-35 ${x} ${baseline})`, "font-size": FONT, fill: "#333" }
        : { x, y: baseline, "text-anchor": "middle", "font-size": FONT, fill: "#333" }, shortLabel(category));
      // A shortened label keeps the full one as a tooltip (on a group: text content stays the label).
      if (text.textContent === category) labels.append(text);
      else {
        const group = tooltip(el("g"), category);
        group.append(text);
        labels.append(group);
      }
    });
    svg.append(labels);
    if (spec.x_label) {
      svg.append(el("text", { class: "chart-x-label", x: left + plotWidth / 2, y: height - 6, "text-anchor": "middle", "font-size": FONT, fill: "#111" }, spec.x_label));
    }
    const yLabel = spec.y_label && spec.unit && !spec.y_label.includes(spec.unit) ? `${spec.y_label} (${spec.unit})` : spec.y_label || spec.unit;
    if (yLabel) {
      const cy = top + plotHeight / 2;
      svg.append(el("text", { class: "chart-y-label", x: FONT, y: cy, transform: `rotate(-90 ${FONT} ${cy})`, "text-anchor": "middle", "font-size": FONT, fill: "#111" }, yLabel));
    }
  }

  function valueText(value, spec, locale) {
    return withUnit(new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(value), spec.unit);
  }

  function drawBars(svg, spec, box, locale) {
    const { left, slot, y } = box;
    const width = (slot * 0.8) / spec.series.length;
    const labelled = spec.series.length * spec.categories.length <= 12 && width >= FONT * 2;
    spec.series.forEach((series, s) => {
      const group = el("g", { class: "chart-series", "data-series": series.name });
      series.values.forEach((value, i) => {
        const x = left + slot * i + slot * 0.1 + width * s;
        const top = Math.min(y(value), y(0));
        const bar = el("rect", {
          class: "chart-bar", x, y: top, width: Math.max(width - 1, 1), height: Math.max(Math.abs(y(0) - y(value)), 0.5),
          fill: color(s), "data-category": spec.categories[i], "data-value": value,
        });
        group.append(tooltip(bar, `${series.name} · ${spec.categories[i]}: ${valueText(value, spec, locale)}`));
        if (labelled) {
          group.append(el("text", {
            x: x + width / 2, y: value >= 0 ? top - 3 : top + Math.abs(y(0) - y(value)) + FONT,
            "text-anchor": "middle", "font-size": FONT - 2, fill: "#333",
          }, compact(value, locale)));
        }
      });
      svg.append(group);
    });
  }

  function drawLines(svg, spec, box, locale) {
    const { left, slot, y } = box;
    spec.series.forEach((series, s) => {
      const group = el("g", { class: "chart-series", "data-series": series.name });
      const points = series.values.map((value, i) => [left + slot * (i + 0.5), y(value)]);
      group.append(el("polyline", {
        class: "chart-line", points: points.map((p) => p.join(",")).join(" "), fill: "none", stroke: color(s), "stroke-width": 2.5,
      }));
      points.forEach(([cx, cy], i) => {
        const dot = el("circle", { class: "chart-point", cx, cy, r: 4, fill: color(s), "data-category": spec.categories[i], "data-value": series.values[i] });
        group.append(tooltip(dot, `${series.name} · ${spec.categories[i]}: ${valueText(series.values[i], spec, locale)}`));
      });
      svg.append(group);
    });
  }

  function drawPie(svg, spec, width, height, locale) {
    const values = spec.series[0].values;
    const total = values.reduce((a, b) => a + b, 0);
    const radius = Math.min(width, height) / 2 - 8;
    const cx = width / 2;
    const cy = height / 2;
    let angle = -Math.PI / 2; // from twelve o'clock, clockwise
    const group = el("g", { class: "chart-series", "data-series": spec.series[0].name });
    values.forEach((value, i) => {
      const share = value / total;
      const sweep = share * 2 * Math.PI;
      const [x1, y1] = [cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)];
      const [x2, y2] = [cx + radius * Math.cos(angle + sweep), cy + radius * Math.sin(angle + sweep)];
      const attrs = { class: "chart-slice", fill: color(i), stroke: "#fff", "stroke-width": 1.5, "data-category": spec.categories[i], "data-value": value };
      const slice = share >= 0.9999
        ? el("circle", { ...attrs, cx, cy, r: radius })
        : el("path", { ...attrs, d: `M ${cx} ${cy} L ${x1} ${y1} A ${radius} ${radius} 0 ${sweep > Math.PI ? 1 : 0} 1 ${x2} ${y2} Z` });
      group.append(tooltip(slice, `${spec.categories[i]}: ${valueText(value, spec, locale)} (${(share * 100).toFixed(1)}%)`));
      if (share >= 0.05) {
        const middle = angle + sweep / 2;
        group.append(el("text", {
          x: cx + radius * 0.65 * Math.cos(middle), y: cy + radius * 0.65 * Math.sin(middle) + FONT * 0.35,
          "text-anchor": "middle", "font-size": FONT, fill: "#fff", "font-weight": 600,
        }, `${(share * 100).toFixed(0)}%`));
      }
      angle += sweep;
    });
    svg.append(group);
  }

  function legend(spec, locale) {
    const list = document.createElement("ul");
    list.className = "chart-legend";
    const pie = spec.type === "pie";
    const total = pie ? spec.series[0].values.reduce((a, b) => a + b, 0) : 0;
    const entries = pie
      ? spec.categories.map((c, i) => {
        const value = valueText(spec.series[0].values[i], spec, locale);
        // Values already in % are the shares; others get theirs.
        return ["%", "％"].includes(spec.unit) ? `${c}: ${value}` : `${c}: ${value} (${((spec.series[0].values[i] / total) * 100).toFixed(1)}%)`;
      })
      : spec.series.map((s) => s.name || "—");
    entries.forEach((text, i) => {
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "chart-swatch";
      swatch.style.background = color(i);
      swatch.setAttribute("aria-hidden", "true");
      item.append(swatch, text);
      list.append(item);
    });
    return list;
  }

  // The values as a table, for screen readers and for reading exact figures (with their sources).
  function dataTable(spec, locale, texts) {
    const details = document.createElement("details");
    details.className = "chart-data";
    const summary = document.createElement("summary");
    summary.textContent = texts.data;
    const table = document.createElement("table");
    table.tabIndex = 0; // it scrolls sideways on a phone: reachable from the keyboard
    const head = table.createTHead().insertRow();
    for (const name of [spec.x_label || "", ...spec.series.map((s) => s.name)]) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      head.append(th);
    }
    const body = table.createTBody();
    spec.categories.forEach((category, i) => {
      const row = body.insertRow();
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = category;
      row.append(th);
      for (const s of spec.series) row.insertCell().textContent = valueText(s.values[i], spec, locale);
    });
    const sources = [...new Set(spec.series.flatMap((s) => s.passages ?? []))].sort((a, b) => a - b);
    details.append(summary, table);
    if (sources.length) {
      const note = document.createElement("p");
      note.className = "chart-sources";
      note.textContent = `${texts.sources}: ${sources.map((n) => `[${n}]`).join("")}`;
      details.append(note);
    }
    return details;
  }

  // A <figure> with the chart as SVG sized to `width` CSS pixels, its legend and its data; or, for a
  // spec that cannot be drawn, a note saying why. texts: {data, sources, cannotDraw(reason)}.
  function draw(spec, width, locale, texts) {
    const figure = document.createElement("figure");
    figure.className = "chart";
    const type = (spec.type || "bar").toLowerCase();
    figure.dataset.type = type;
    const caption = document.createElement("figcaption");
    const captionId = `chart-title-${++drawn}`;
    caption.id = captionId;
    caption.textContent = spec.title;
    figure.append(caption);
    const why = problem(spec);
    if (why) {
      const note = document.createElement("p");
      note.className = "chart-problem";
      note.textContent = texts.cannotDraw(why);
      figure.append(note);
      return figure;
    }
    spec = { ...spec, type };
    const w = Math.round(Math.max(280, Math.min(720, width)));
    const h = Math.round(type === "pie" ? Math.min(w * 0.7, 320) : Math.max(220, Math.min(w * 0.6, 360)));
    const svg = el("svg", { viewBox: `0 0 ${w} ${h}`, width: w, height: h, role: "img", "aria-labelledby": captionId });
    svg.append(el("title", {}, spec.title || type));
    if (type === "pie") drawPie(svg, spec, w, h, locale);
    else {
      const box = axes(spec, w, h, locale);
      drawAxes(svg, spec, box, w, h, locale);
      if (type === "bar") drawBars(svg, spec, box, locale);
      else drawLines(svg, spec, box, locale);
    }
    figure.append(svg, legend(spec, locale), dataTable(spec, locale, texts));
    return figure;
  }

  return { draw, problem, ticks, withUnit };
})();
