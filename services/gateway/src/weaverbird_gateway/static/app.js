// WeaverBird web page: a conversation over POST api/ask (Server-Sent Events; the page holds the history and
// sends it with each question), saving pages and uploading files, and browsing and pruning the knowledge
// base (GET / DELETE api/documents). A task's answer shows its stages, calculation, JSON and chart
// (drawn by chart.js).
// Plain browser JavaScript, no build step and no dependencies. Text from the server is always inserted
// as text (textContent), never as HTML.
"use strict";

const TEXT = {
  en: {
    skip: "Skip to the question",
    tagline: "Financial questions in English or Chinese, answered with cited sources",
    tabChat: "Chat", tabAdd: "Add to knowledge base", tabKb: "Knowledge base",
    questionLabel: "Your question",
    questionPlaceholder: "e.g. What was Northwind Robotics' revenue in fiscal 2024?",
    ask: "Ask", askHint: "Enter sends; Shift+Enter starts a new line.",
    settings: "Settings", kLabel: "passages retrieved", jLabel: "passages the model reads",
    cLabel: "web-search threshold", cPlaceholder: "default",
    addUrlTitle: "Save a web page", urlLabel: "Page address (URL)",
    asyncLabel: "Queue it (asynchronous, through Kafka)", save: "Save to knowledge base",
    uploadTitle: "Upload a file", fileLabel: "PDF, HTML, Markdown or text file", upload: "Upload",
    kbOrigin: "Origin", kbAny: "any", originLocal: "local file", originWeb: "web search", originUser: "saved by a user",
    kbCompany: "Company", kbLanguage: "Language", kbSince: "Added since", kbShow: "Show", kbMore: "More",
    kbPreview: "Start of the text", kbClose: "Close", kbCancel: "Cancel", kbDelete: "Delete", kbDetails: "Details",
    kbLoading: "Loading…", kbEmpty: "No documents match.",
    kbCount: (shown, total) => `${shown} of ${total} documents`,
    kbFacts: "Figures from its statements", factPage: "Page", factTable: "Table", factLabel: "Line item",
    factConcept: "Concept", factPeriod: "Period", factValue: "Value", perShare: "per share", shares: "shares",
    factsCount: (n) => `${n} figures read from its statement tables; each page links to the source.`,
    pageShort: (n) => `p. ${n}`, figureSource: (title, page) => `${title}, page ${page}`,
    kbAdded: "added", kbChunks: (n) => `${n} chunks`, kbUnknownTime: "time not recorded",
    kbFoundFor: (q) => `found for “${q}”`,
    kbConfirm: (title) => `Delete “${title}” from the knowledge base? Its passages will no longer be retrieved.`,
    kbDeleted: (r) => `Deleted ${r.document_id}: ${r.deleted_chunks} chunks` + (r.dedupe_cleared ? "; the page can be added again." : "."),
    fTitle: "Title", fSource: "Source", fOrigin: "Origin", fAdded: "Added", fQuestion: "Question",
    fScore: "Best score", fFound: "Found", fCompany: "Company", fYear: "Year", fQuarter: "Quarter",
    fType: "Type", fLanguage: "Language", fPublished: "Published", fChunks: "Chunks", fId: "Document id",
    sources: "Sources", further: "Further reading",
    searching: "Searching…", reading: (n) => `The model is reading ${n} prompt tokens…`,
    writing: "Writing…", showPassage: "Show passage", page: "page", score: "score",
    saveKb: "Save to KB", saving: "Saving…",
    saved: (r) => r.queued ? `Queued (${r.document_id})` : `Saved: ${r.chunks} chunks (${r.document_id})`,
    withheld: (nums) => `The generated answer was withheld: its figures (${nums}) are not in the passages it cites.`,
    names_nothing: "The generated answer was withheld: it restated the question without naming what it asks for.",
    lists_nothing: "The generated answer was withheld: it announced a list without naming any of its items.",
    refused: "No relevant evidence was found; the model was not asked.",
    best: "best", first: "first token", total: "total", tokens: "tokens",
    routeLocal: "local", routeWeb: "web", failed: "Failed",
    newConversation: "New conversation",
    historyCount: (n) => n ? `Follow-up questions continue this conversation (${n} earlier ${n === 1 ? "question" : "questions"}).` : "",
    conversationCleared: "New conversation started.",
    taskLabel: "Task", taskAuto: "decided from the question",
    task_lookup: "lookup", task_calculation: "calculation", task_extraction: "JSON extraction", task_analysis: "analysis with chart",
    jsonKeysLabel: "JSON keys", jsonKeysPlaceholder: "name, share %", jsonKeysHint: "Comma-separated keys for a JSON extraction.",
    roundsLabel: "Analysis rounds",
    taskIs: (task, by) => `task: ${task}` + (by ? ` (${by})` : ""),
    searchedAs: (q) => `searched as: “${q}”`,
    stages: "Stages", round: (n) => `round ${n}`, passed: "passed", notPassed: "failed",
    stageDone: (stage) => `${stage} done…`,
    calculation: "Calculation", formula: "Formula", result: "Result", shownAs: (text) => `shown as “${text}”`,
    written: (text) => `written “${text}”`,
    json: "JSON", valid: "valid", repaired: "repaired", invalid: (why) => `invalid: ${why}`,
    missingKeys: (keys) => `missing keys ${keys}`, noJson: "(no JSON was produced)",
    chartData: "Data", chartSources: "Sources", cannotDraw: (why) => `The chart cannot be drawn: ${why}.`,
    verdict_local: "local", verdict_web: "web", verdict_no_web: "no web", verdict_refused: "refused",
    verdictTitle_local: "Answered from the knowledge base", verdictTitle_web: "Web pages joined the passages",
    verdictTitle_no_web: "Local evidence was weak and the web added nothing: local passages only",
    verdictTitle_refused: "Local evidence was weak and the web added nothing: not answered",
    by_request: "by request", by_rules: "by rules", by_llm: "by the model",
    timing_embed: "embed", timing_search: "search", timing_rerank: "rerank", timing_web: "web search",
    timing_fetch: "fetch", timing_rank: "rank", web: "web", webStatus_not_configured: "not configured", webStatus_ok: "ok",
    stage_plan: "plan", stage_execute: "execute", stage_express: "express", stage_review: "review",
    stage_extract: "extract", stage_compute: "compute", stage_repair: "repair", stage_chart: "chart",
    origin_local: "local", origin_web: "web", source: (n) => `source ${n}`,
    adminTitle: "Admin token needed", adminOk: "Delete",
    adminWhy: "Deleting needs an administrator's token. This tab keeps it in memory only (never stored) and sends it with deletes.",
    adminLabel: "Admin token", adminRefused: (status) => `The token was not accepted (${status}). Try another one.`,
    adminCancelled: "Not deleted: no admin token was given.",
    adminAscii: "A token has letters, digits and punctuation only (no spaces or other characters).",
  },
  zh: {
    skip: "跳到提问",
    tagline: "用中文或英文提问金融问题，答案附带引用来源",
    tabChat: "问答", tabAdd: "添加到知识库", tabKb: "知识库",
    questionLabel: "你的问题",
    questionPlaceholder: "例如：青松新能源2024年的营业收入是多少？",
    ask: "提问", askHint: "回车发送；Shift+回车换行。",
    settings: "设置", kLabel: "检索段落数", jLabel: "模型阅读段落数",
    cLabel: "网络搜索阈值", cPlaceholder: "默认",
    addUrlTitle: "保存网页", urlLabel: "网页地址（URL）",
    asyncLabel: "排队处理（异步，经 Kafka）", save: "保存到知识库",
    uploadTitle: "上传文件", fileLabel: "PDF、HTML、Markdown 或文本文件", upload: "上传",
    kbOrigin: "来源", kbAny: "全部", originLocal: "本地文件", originWeb: "网络搜索", originUser: "用户保存",
    kbCompany: "公司", kbLanguage: "语言", kbSince: "添加时间不早于", kbShow: "显示", kbMore: "更多",
    kbPreview: "正文开头", kbClose: "关闭", kbCancel: "取消", kbDelete: "删除", kbDetails: "详情",
    kbLoading: "加载中…", kbEmpty: "没有匹配的文档。",
    kbCount: (shown, total) => `已显示 ${shown} / ${total} 个文档`,
    kbFacts: "报表中的数据", factPage: "页码", factTable: "表格", factLabel: "项目", factConcept: "概念",
    factPeriod: "期间", factValue: "数值", perShare: "每股", shares: "股",
    factsCount: (n) => `从报表中读取的 ${n} 项数据；页码链接到原文。`,
    pageShort: (n) => `第 ${n} 页`, figureSource: (title, page) => `${title}，第 ${page} 页`,
    kbAdded: "添加于", kbChunks: (n) => `${n} 个片段`, kbUnknownTime: "未记录时间",
    kbFoundFor: (q) => `因问题“${q}”找到`,
    kbConfirm: (title) => `从知识库删除“${title}”？删除后将不再检索到它的段落。`,
    kbDeleted: (r) => `已删除 ${r.document_id}：${r.deleted_chunks} 个片段` + (r.dedupe_cleared ? "；该网页可以再次添加。" : "。"),
    fTitle: "标题", fSource: "来源地址", fOrigin: "来源", fAdded: "添加时间", fQuestion: "问题",
    fScore: "最高分", fFound: "发现时间", fCompany: "公司", fYear: "年度", fQuarter: "季度",
    fType: "类型", fLanguage: "语言", fPublished: "发布日期", fChunks: "片段数", fId: "文档编号",
    sources: "来源", further: "延伸阅读",
    searching: "检索中…", reading: (n) => `模型正在阅读 ${n} 个提示词元…`,
    writing: "生成中…", showPassage: "查看段落", page: "第", score: "得分",
    saveKb: "存入知识库", saving: "保存中…",
    saved: (r) => r.queued ? `已排队（${r.document_id}）` : `已保存：${r.chunks} 个片段（${r.document_id}）`,
    withheld: (nums) => `生成的答案已被拦截：其中的数字（${nums}）不在所引用的段落中。`,
    names_nothing: "生成的答案已被拦截：它只是复述了问题，没有给出所问的名称。",
    lists_nothing: "生成的答案已被拦截：它只引出了一个列表，却没有列出任何一项。",
    refused: "未找到相关证据，未调用模型。",
    best: "最高分", first: "首词元", total: "总计", tokens: "词元",
    routeLocal: "本地", routeWeb: "网络", failed: "失败",
    newConversation: "新对话",
    historyCount: (n) => n ? `追问将延续本次对话（此前 ${n} 个问题）。` : "",
    conversationCleared: "已开始新对话。",
    taskLabel: "任务", taskAuto: "根据问题判断",
    task_lookup: "查询", task_calculation: "计算", task_extraction: "JSON 抽取", task_analysis: "分析并作图",
    jsonKeysLabel: "JSON 键", jsonKeysPlaceholder: "名称, 占比 %", jsonKeysHint: "JSON 抽取所需的键，用逗号分隔。",
    roundsLabel: "分析轮数",
    taskIs: (task, by) => `任务：${task}` + (by ? `（${by}）` : ""),
    searchedAs: (q) => `检索问题：“${q}”`,
    stages: "步骤", round: (n) => `第 ${n} 轮`, passed: "通过", notPassed: "未通过",
    stageDone: (stage) => `${stage} 完成…`,
    calculation: "计算", formula: "公式", result: "结果", shownAs: (text) => `答案中写作“${text}”`,
    written: (text) => `原文“${text}”`,
    json: "JSON", valid: "有效", repaired: "已修复", invalid: (why) => `无效：${why}`,
    missingKeys: (keys) => `缺少键 ${keys}`, noJson: "（未生成 JSON）",
    chartData: "数据", chartSources: "来源", cannotDraw: (why) => `无法绘制图表：${why}。`,
    verdict_local: "本地", verdict_web: "网络", verdict_no_web: "无网络结果", verdict_refused: "未作答",
    verdictTitle_local: "答案来自知识库", verdictTitle_web: "网页段落已加入参考",
    verdictTitle_no_web: "本地证据较弱，网络未提供补充：仅依据本地段落",
    verdictTitle_refused: "本地证据较弱，网络未提供补充：未作答",
    by_request: "由请求指定", by_rules: "按规则判断", by_llm: "由模型判断",
    timing_embed: "向量化", timing_search: "检索", timing_rerank: "重排序", timing_web: "网络搜索",
    timing_fetch: "抓取", timing_rank: "排序", web: "网络", webStatus_not_configured: "未配置", webStatus_ok: "正常",
    stage_plan: "规划", stage_execute: "执行", stage_express: "撰写", stage_review: "审核",
    stage_extract: "抽取", stage_compute: "计算", stage_repair: "修复", stage_chart: "作图",
    origin_local: "本地", origin_web: "网络", source: (n) => `来源 ${n}`,
    adminTitle: "需要管理员令牌", adminOk: "删除",
    adminWhy: "删除需要管理员令牌。令牌只保存在本标签页的内存中（不会写入存储），随删除请求发送。",
    adminLabel: "管理员令牌", adminRefused: (status) => `令牌未被接受（${status}），请换一个。`,
    adminCancelled: "未删除：没有提供管理员令牌。",
    adminAscii: "令牌只含英文字母、数字和标点（不含空格或其他字符）。",
    notice_filters_weak_period: (p) => `${p.filters} 的段落相关性较弱；已不限期间检索 ${p.company}。`,
    notice_filters_weak: (p) => `${p.filters} 的段落相关性较弱；已去掉筛选条件重新检索。`,
    notice_low_score: (p) => `本地证据较弱（最高分 ${p.best} < 阈值 ${p.threshold}）。`,
    notice_web_not_configured: () => "未配置网络搜索。",
    notice_facts_answer: () => "答案由知识库中的报表数据直接计算得出，未调用模型。",
    notice_web_skipped_filter: () => "请求带有筛选条件，答案仅依据符合条件的本地段落。",
    notice_web_failed: (p) => `网络搜索失败（${p.status}）。`,
    gap_company: "知识库中没有所问公司的资料。", gap_period: "知识库中没有所问期间的资料。",
    gap_quarter: "知识库中没有所问季度的资料。", gap_date: "所问日期晚于知识库中该公司最新的文档。",
    gap_name: "知识库中没有任何段落提到问题中的名称。", gap_terms: "知识库中没有段落包含问题的大部分词语。",
    gap_kind: "知识库中没有该公司所问类型的文档（如年度报告或季度报告）。",
  },
};

let lang = "en";
const t = (key, ...args) => {
  const value = TEXT[lang][key] ?? TEXT.en[key];
  return typeof value === "function" ? value(...args) : value;
};
const $ = (selector, root = document) => root.querySelector(selector);
let turnCount = 0;

// Text drawn from server data in the page's language: each [element, render] pair runs again when the
// language changes, so answers already on the page switch too.
let relabel = [];
function localized(element, render) {
  render(element);
  relabel.push([element, render]);
  return element;
}

// A server note in the page's language: a code this page knows, else the server's (English) text.
function noticeText(notice) {
  if (lang === "en") return notice.text;
  if (notice.code === "coverage_gap") return TEXT[lang][`gap_${notice.params.gap}`] ?? notice.text;
  const render = TEXT[lang][`notice_${notice.code}`];
  return typeof render === "function" ? render(notice.params || {}) : notice.text;
}

// The conversation, held by the page (any orchestrator replica can answer): {role, text} turns, oldest
// first. `generation` changes with "New conversation", so an answer still arriving from before it is not
// added to the new one.
const MAX_HISTORY_TURNS = 20; // the orchestrator's default max_history_turns
const conversation = { turns: [], generation: 0 };

function historyToSend() {
  const recent = conversation.turns.slice(-MAX_HISTORY_TURNS);
  while (recent.length && recent[0].role !== "user") recent.shift();
  return recent;
}

function showHistoryStatus() {
  $("#history-status").textContent = t("historyCount", conversation.turns.filter((turn) => turn.role === "user").length);
}

function translate(root) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
}

// ---------------------------------------------------------------- interface language and tabs

function applyLanguage(next) {
  lang = next;
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  translate(document);
  for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const button of document.querySelectorAll(".lang button")) {
    button.setAttribute("aria-pressed", String(button.dataset.lang === next));
  }
  if (kb.loaded) renderDocuments();
  if (kb.facts) showFacts(kb.facts.facts, kb.facts.source);
  relabel = relabel.filter(([element]) => element.isConnected);
  for (const [element, render] of relabel) render(element);
  showHistoryStatus();
}

function selectTab(tab, focus) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    document.getElementById(other.getAttribute("aria-controls")).hidden = !selected;
  }
  if (focus) tab.focus();
  if (tab.id === "tab-kb") loadDocuments(false);
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => selectTab(tab, false));
    // Arrow keys move between tabs (the WAI-ARIA tabs pattern); Tab moves into the panel.
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) {
        event.preventDefault();
        selectTab(tabs[(i + step + tabs.length) % tabs.length], true);
      }
    });
  });
}

// ---------------------------------------------------------------- HTTP helpers

async function errorMessage(response) {
  try {
    const body = await response.json();
    return `${response.status}: ${body.detail ?? response.statusText}`;
  } catch {
    return `${response.status}: ${response.statusText}`;
  }
}

async function postJson(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await errorMessage(response));
  return response.json();
}

// Reads a text/event-stream body and calls onEvent(name, data) per event (EventSource is GET-only).
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

// ---------------------------------------------------------------- rendering an answer

function numberOrNull(input) {
  const value = input.value.trim();
  return value === "" ? null : Number(value);
}

function ms(value) {
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

// "[n]" as a link to source n of this turn.
function citeLink(number, turnId) {
  const link = document.createElement("a");
  link.className = "cite";
  link.href = `#${turnId}-src-${number}`;
  link.textContent = `[${number}]`;
  return localized(link, (el) => el.setAttribute("aria-label", t("source", number)));
}

// The answer text with each [n] turned into a link to source n of this turn.
function renderAnswer(container, text, turnId) {
  container.replaceChildren();
  let last = 0;
  for (const match of text.matchAll(/\[(\d{1,2})\]/g)) {
    container.append(text.slice(last, match.index), citeLink(match[1], turnId));
    last = match.index + match[0].length;
  }
  container.append(text.slice(last));
}

function formatNumber(value) {
  return new Intl.NumberFormat(lang === "zh" ? "zh-CN" : "en", { maximumFractionDigits: 6 }).format(value);
}

// One finished stage of a task: "review · round 1 · 812 ms · failed · <detail>", and a plan's sub-questions.
function stageName(stage) {
  return TEXT[lang][`stage_${stage}`] ?? stage;
}

function stageLine(stage) {
  const parts = [stageName(stage.stage), t("round", stage.round), ms(stage.ms)];
  if (stage.stage === "review") parts.push(stage.passed ? `✓ ${t("passed")}` : `✗ ${t("notPassed")}`);
  if (stage.detail) parts.push(stage.detail);
  return parts.join(" · ");
}

function stageItem(stage) {
  const item = document.createElement("li");
  item.className = "stage";
  item.dataset.stage = stage.stage;
  item.dataset.round = stage.round;
  if (stage.stage === "review") item.dataset.passed = String(stage.passed);
  const line = localized(document.createElement("span"), (el) => { el.textContent = stageLine(stage); });
  line.className = "stage-line";
  item.append(line);
  if (stage.sub_questions.length) {
    const list = document.createElement("ul");
    for (const question of stage.sub_questions) {
      const sub = document.createElement("li");
      sub.textContent = question;
      list.append(sub);
    }
    item.append(list);
  }
  return item;
}

// The figures (each linked to the passage it was read from), the formula, and the result code computed.
function renderCalculation(section, calc, turnId, citations = []) {
  $(".figures", section).replaceChildren(...calc.figures.map((figure) => {
    const item = document.createElement("li");
    const written = figure.text ? ` (${t("written", figure.text)})` : "";
    item.append(citeLink(figure.passage, turnId), ` ${figure.label}: ${Charts.withUnit(formatNumber(figure.value), figure.unit)}${written}`);
    // The page the figure was read from, linked to the document where it is a URL.
    const source = citations.find((c) => c.number === figure.passage);
    if (source && source.page) {
      const link = Facts.pageLink(source.source, source.page, "");
      localized(link, (el) => { el.textContent = t("figureSource", source.title || source.source, source.page); });
      item.append(" — ", link);
    }
    return item;
  }));
  const formula = $(".formula", section);
  formula.replaceChildren();
  if (calc.formula) {
    const code = document.createElement("code");
    code.textContent = calc.formula;
    formula.append(`${t("formula")}: `, code);
  }
  const computed = Charts.withUnit(formatNumber(calc.result), calc.unit);
  const shown = calc.result_text && calc.result_text !== computed ? ` (${t("shownAs", calc.result_text)})` : "";
  $(".result", section).textContent = calc.formula || calc.figures.length ? `${t("result")}: ${computed}${shown}` : "";
  section.hidden = false;
}

// An extraction's JSON, pretty when it parses, marked valid or invalid (never shown as valid when it is not).
function renderStructured(section, structured) {
  const status = $(".json-status", section);
  status.dataset.valid = String(structured.valid);
  if (structured.valid) status.textContent = structured.repaired ? `${t("valid")} (${t("repaired")})` : t("valid");
  else {
    const why = [...structured.errors];
    if (structured.missing_keys.length) why.push(t("missingKeys", structured.missing_keys.join(", ")));
    status.textContent = t("invalid", why.join("; ") || "?");
  }
  let text = structured.json;
  try {
    text = text ? JSON.stringify(JSON.parse(text), null, 2) : t("noJson");
  } catch {
    // not JSON: shown as it came, under "invalid"
  }
  $("code", section).textContent = text;
  section.hidden = false;
}

function renderChart(box, spec) {
  const texts = { data: t("chartData"), sources: t("chartSources"), cannotDraw: (why) => t("cannotDraw", why) };
  box.hidden = false; // laid out first, so the drawing can take the width it has
  box.replaceChildren(Charts.draw(spec, box.clientWidth || 640, lang === "zh" ? "zh-CN" : "en", texts));
}

// What the user is told: the verdict word (local / web / no web / refused; older servers send only the
// route), the score against c only where it decided, timings, task, standalone question and notes.
function routeVerdict(route) {
  return route.verdict || route.route;
}

function routeScore(route) {
  const kj = `K ${route.top_k} · J ${route.top_j}`;
  if (route.verdict && !route.score_decided) return kj; // older servers send no verdict: the score decided
  const relation = route.best_local_score >= route.threshold ? "≥" : "<";
  return `${t("best")} ${route.best_local_score.toFixed(3)} ${relation} c ${route.threshold.toFixed(3)} · ${kj}`;
}

function routeTimings(route) {
  const timings = route.timings;
  const stages = [
    ["embed", timings.embed_ms], ["search", timings.local_search_ms], ["rerank", timings.rerank_ms],
    ["web", timings.web_search_ms], ["fetch", timings.web_fetch_ms], ["rank", timings.rank_ms],
  ].filter(([, value]) => value >= 0.5).map(([name, value]) => `${t(`timing_${name}`)} ${ms(value)}`);
  if (route.web_status && route.web_status !== "not_needed") {
    stages.push(`${t("web")}: ${TEXT[lang][`webStatus_${route.web_status}`] ?? route.web_status}`);
  }
  if (route.done && route.done.first_token_ms > 0) {
    stages.push(`${t("first")} ${ms(route.done.first_token_ms)}`, `${t("total")} ${ms(route.done.total_ms)}`);
  }
  return stages.join(" · ");
}

function routeNotes(route) {
  if (route.notices && route.notices.length) return route.notices.map(noticeText).join(" ");
  return route.note || "";
}

function renderRoute(badge, route, asked) {
  const verdict = routeVerdict(route);
  badge.dataset.route = route.route;
  badge.dataset.verdict = verdict;
  badge.dataset.scoreDecided = String(!route.verdict || Boolean(route.score_decided));
  badge.route = route; // the done event adds its timings here
  localized(badge, (el) => {
    el.replaceChildren();
    const label = document.createElement("strong");
    label.className = "route-name";
    label.textContent = TEXT[lang][`verdict_${verdict}`] ?? verdict;
    const score = document.createElement("span");
    score.className = "route-score";
    score.textContent = routeScore(route);
    const detail = document.createElement("span");
    detail.className = "route-timings";
    detail.textContent = routeTimings(route);
    el.append(label, score, detail);
    if (route.task && route.task !== "unspecified") {
      const task = document.createElement("span");
      task.className = "route-task";
      task.dataset.task = route.task;
      const by = route.task_decided_by ? TEXT[lang][`by_${route.task_decided_by}`] ?? route.task_decided_by : "";
      task.textContent = t("taskIs", t(`task_${route.task}`), by);
      el.append(task);
    }
    const standalone = (route.standalone_question || "").trim();
    if (standalone && standalone !== asked.trim()) {
      const searched = document.createElement("span");
      searched.className = "route-standalone";
      searched.textContent = t("searchedAs", standalone);
      el.append(searched);
    }
    const notes = routeNotes(route);
    if (notes) {
      const note = document.createElement("span");
      note.className = "route-note";
      note.textContent = notes;
      el.append(note);
    }
    el.title = TEXT[lang][`verdictTitle_${verdict}`] ?? "";
  });
  badge.hidden = false;
}

function saveButton(url) {
  const wrap = document.createElement("span");
  wrap.className = "save";
  const button = document.createElement("button");
  button.type = "button";
  button.className = "save-kb";
  button.textContent = t("saveKb");
  const status = document.createElement("span");
  status.className = "save-status";
  status.setAttribute("role", "status");
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = t("saving");
    try {
      status.textContent = t("saved", await postJson("api/documents", { url }));
    } catch (error) {
      status.textContent = `${t("failed")}: ${error.message}`;
      button.disabled = false;
    }
  });
  wrap.append(button, status);
  return wrap;
}

function passageItem(passage, turnId) {
  const item = document.createElement("li");
  item.id = `${turnId}-src-${passage.number}`;
  item.value = passage.number;
  item.className = passage.cited_in_answer ? "passage cited" : "passage";
  item.dataset.origin = passage.origin;
  item.tabIndex = -1; // a [n] link moves focus here
  const title = document.createElement("span");
  title.className = "passage-title";
  title.textContent = passage.title || passage.source;
  const where = document.createElement(/^https?:\/\//.test(passage.source) ? "a" : "span");
  where.className = "passage-source";
  if (where.tagName === "A") {
    where.href = passage.source;
    where.target = "_blank";
    where.rel = "noopener noreferrer";
  }
  where.textContent = passage.source + (passage.page ? `, ${t("page")} ${passage.page}` : "");
  const meta = document.createElement("span");
  meta.className = "passage-meta";
  localized(meta, (el) => {
    el.textContent = `${t(`origin_${passage.origin}`) ?? passage.origin} · ${t("score")} ${passage.score.toFixed(3)}`;
  });
  const text = document.createElement("details");
  const summary = document.createElement("summary");
  summary.dataset.i18n = "showPassage";
  summary.textContent = t("showPassage");
  const quote = document.createElement("blockquote");
  quote.tabIndex = 0; // it scrolls: keyboard users must be able to reach it
  quote.textContent = passage.text;
  text.append(summary, quote);
  item.append(title, " — ", where, " ", meta);
  if (passage.origin === "web" && /^https?:\/\//.test(passage.source)) item.append(" ", saveButton(passage.source));
  item.append(text);
  return item;
}

function doneLine(done) {
  if (done.answer_check === "refused") return `${t("refused")} · ${t("total")} ${ms(done.timings.total_ms)}`;
  return [
    done.model_id, `${done.completion_tokens} ${t("tokens")}`,
    `${t("first")} ${ms(done.timings.first_token_ms)}`, `${t("total")} ${ms(done.timings.total_ms)}`,
  ].filter(Boolean).join(" · ");
}

// ---------------------------------------------------------------- following the answer

// While an answer streams, the window keeps its newest line in sight above the composer (sticky on a
// desktop, below the conversation on a phone), and shows the question too when both fit. Sources and
// further reading may grow below without pulling the answer away. Only the window scrolls: focus stays
// where the reader left it. A reader who scrolls by hand takes over until the next question.
const follow = { turn: null };

function visibleBottom() {
  const form = $("#ask-form");
  const sticky = getComputedStyle(form).position === "sticky";
  return window.innerHeight - (sticky ? form.getBoundingClientRect().height : 0);
}

function followTurn() {
  const turn = follow.turn;
  if (!turn || !turn.isConnected) return;
  const margin = 8;
  const shown = [".answer", ".progress", ".withheld", ".error"]
    .map((selector) => $(selector, turn))
    .filter((el) => el.getClientRects().length);
  const end = Math.max(...shown.map((el) => el.getBoundingClientRect().bottom)) + margin;
  const top = turn.getBoundingClientRect().top - margin;
  const hidden = end - visibleBottom(); // > 0: the newest line is under the composer or off screen
  let by = 0;
  if (hidden > 0) by = hidden;
  else if (top < 0) by = Math.max(top, hidden); // bring the question back while the newest line stays
  if (Math.abs(by) >= 1) window.scrollBy({ top: by, behavior: "instant" });
}

function stopFollowing() {
  follow.turn = null;
}

for (const event of ["wheel", "touchmove"]) window.addEventListener(event, stopFollowing, { passive: true });
window.addEventListener("keydown", (event) => {
  if (["PageUp", "PageDown", "Home", "End"].includes(event.key) && event.target === document.body) stopFollowing();
});

// ---------------------------------------------------------------- asking

async function ask(question) {
  const turnId = `turn-${++turnCount}`;
  const turn = $("#answer-template").content.firstElementChild.cloneNode(true);
  turn.id = turnId;
  translate(turn);
  $(".asked", turn).textContent = question;
  const answer = $(".answer", turn);
  answer.lang = /[\u3400-\u9fff]/.test(question) ? "zh-CN" : "en";
  const progress = $(".progress", turn);
  progress.textContent = t("searching");
  $("#conversation").append(turn);
  follow.turn = turn;
  followTurn();

  let text = "";
  let shown = ""; // what the reader was given as the answer: it goes into the history
  let citations = []; // the sources [n] of this turn: a calculation's figures name their pages
  let failed = false;
  const generation = conversation.generation;
  const body = {
    question,
    top_k: numberOrNull($("#top-k")),
    top_j: numberOrNull($("#top-j")),
    threshold: numberOrNull($("#threshold")),
    history: historyToSend(),
    task: $("#task").value || null,
    json_keys: $("#json-keys").value.split(/[,，]/).map((key) => key.trim()).filter(Boolean),
    max_rounds: numberOrNull($("#max-rounds")),
  };
  const showError = (message) => {
    failed = true;
    const error = $(".error", turn);
    error.textContent = message;
    error.hidden = false;
  };
  try {
    const response = await fetch("api/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(await errorMessage(response));
    await readEvents(response, (name, data) => {
      if (name === "route") renderRoute($(".route-badge", turn), data, question);
      else if (name === "prompt") progress.textContent = t("reading", data.prompt_tokens);
      else if (name === "stage") {
        const stages = $(".stages", turn);
        stages.append(stageItem(data));
        stages.hidden = false;
        progress.textContent = t("stageDone", stageName(data.stage));
      }
      else if (name === "token") {
        progress.textContent = t("writing");
        text += data.text;
        renderAnswer(answer, text, turnId);
      } else if (name === "citations" && data.citations.length) {
        $(".citations", turn).replaceChildren(...data.citations.map((c) => passageItem(c, turnId)));
        citations = data.citations;
        $(".sources", turn).hidden = false;
      } else if (name === "further_reading" && data.passages.length) {
        $(".further-list", turn).replaceChildren(...data.passages.map((c) => passageItem(c, turnId)));
        $(".further", turn).hidden = false;
      } else if (name === "done") {
        shown = text;
        if (data.replacement_answer) {
          shown = data.replacement_answer;
          // The streamed text is not to be shown: its figures are in no cited passage.
          renderAnswer(answer, data.replacement_answer, turnId);
          const withheld = $(".withheld", turn);
          withheld.textContent =
            data.replacement_reason === "names_nothing" || data.replacement_reason === "lists_nothing"
              ? t(data.replacement_reason)
              : t("withheld", data.unsupported_numbers.join(", "));
          withheld.hidden = false;
        } else if (!text && data.answer_check === "refused") {
          renderAnswer(answer, t("refused"), turnId);
        }
        if (data.calculation) renderCalculation($(".calculation", turn), data.calculation, turnId, citations);
        if (data.structured) renderStructured($(".structured", turn), data.structured);
        if (data.chart) renderChart($(".chart-box", turn), data.chart);
        localized($(".done-line", turn), (el) => { el.textContent = doneLine(data); });
        const badge = $(".route-badge", turn);
        if (badge.route) {
          badge.route.done = data.timings;
          for (const [element, render] of relabel) if (element === badge) render(element);
        }
        turn.dataset.done = "true";
      } else if (name === "error") showError(data.detail);
      if (follow.turn === turn) followTurn();
    });
  } catch (error) {
    showError(error.message);
  } finally {
    progress.textContent = "";
    turn.dataset.finished = "true";
    if (follow.turn === turn) followTurn();
  }
  if (turn.dataset.done === "true" && !failed && generation === conversation.generation) {
    conversation.turns.push({ role: "user", text: question });
    if (shown.trim()) conversation.turns.push({ role: "assistant", text: shown.trim() });
    showHistoryStatus();
  }
}

function newConversation() {
  conversation.turns = [];
  conversation.generation += 1;
  $("#conversation").replaceChildren();
  $("#history-status").textContent = t("conversationCleared");
  $("#question").focus();
}

function setUpChat() {
  const form = $("#ask-form");
  const question = $("#question");
  const button = $("#ask-button");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = question.value.trim();
    if (!text || button.disabled) return;
    button.disabled = true;
    question.value = "";
    try {
      await ask(text);
    } finally {
      button.disabled = false;
      // preventScroll: on a phone the box is below the answer, and focusing it must not scroll past it.
      if (document.activeElement === document.body || document.activeElement === question) {
        question.focus({ preventScroll: true });
      }
    }
  });
  $("#new-conversation").addEventListener("click", newConversation);
  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault(); // an IME composing Chinese uses Enter to confirm, so only plain Enter sends
      form.requestSubmit();
    }
  });
  // A [n] link scrolls to its source and moves focus there, so keyboard users land on it too.
  $("#conversation").addEventListener("click", (event) => {
    const link = event.target.closest("a.cite");
    if (!link) return;
    const target = document.getElementById(link.hash.slice(1));
    if (target) {
      event.preventDefault();
      target.scrollIntoView({ block: "center" });
      target.focus();
    }
  });
}

// ---------------------------------------------------------------- adding documents

function setUpAdd() {
  $("#url-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = $("#url-status");
    status.textContent = t("saving");
    try {
      const reply = await postJson("api/documents", { url: $("#url").value.trim(), asynchronous: $("#url-async").checked });
      status.textContent = t("saved", reply);
    } catch (error) {
      status.textContent = `${t("failed")}: ${error.message}`;
    }
  });
  $("#upload-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = $("#upload-status");
    const file = $("#file").files[0];
    if (!file) return;
    status.textContent = t("saving");
    const form = new FormData();
    form.append("file", file);
    try {
      const response = await fetch("api/documents/upload", { method: "POST", body: form });
      if (!response.ok) throw new Error(await errorMessage(response));
      status.textContent = t("saved", await response.json());
    } catch (error) {
      status.textContent = `${t("failed")}: ${error.message}`;
    }
  });
}

// ---------------------------------------------------------------- the knowledge base tab

const kb = { documents: [], nextToken: "", total: 0, loaded: false, opener: null, facts: null };

function formatTime(iso) {
  if (!iso) return t("kbUnknownTime");
  const when = new Date(iso);
  return when.toLocaleString(lang === "zh" ? "zh-CN" : "en", { dateStyle: "medium", timeStyle: "short" });
}

function originLabel(origin) {
  return t({ local: "originLocal", web: "originWeb", user: "originUser" }[origin] ?? "kbAny");
}

function kbQuery(pageToken) {
  const params = new URLSearchParams();
  for (const [name, id] of [["origin", "kb-origin"], ["company", "kb-company"], ["language", "kb-language"]]) {
    const value = $(`#${id}`).value.trim();
    if (value) params.set(name, value);
  }
  const since = $("#kb-since").value; // yyyy-mm-dd, the start of that day in the reader's time zone
  if (since) params.set("since", new Date(`${since}T00:00:00`).toISOString());
  params.set("page_size", "50");
  if (pageToken) params.set("page_token", pageToken);
  return params.toString();
}

// Loads the first page (more = false) or appends the next one.
async function loadDocuments(more) {
  const status = $("#kb-status");
  status.textContent = t("kbLoading");
  $("#kb-list").setAttribute("aria-busy", "true");
  try {
    const response = await fetch(`api/documents?${kbQuery(more ? kb.nextToken : "")}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(await errorMessage(response));
    const page = await response.json();
    kb.documents = more ? [...kb.documents, ...page.documents] : page.documents;
    kb.nextToken = page.next_page_token;
    kb.total = page.total_size;
    kb.loaded = true;
    renderDocuments();
  } catch (error) {
    status.textContent = `${t("failed")}: ${error.message}`;
  } finally {
    $("#kb-list").setAttribute("aria-busy", "false");
  }
}

function documentItem(doc) {
  const item = document.createElement("li");
  item.className = "kb-doc";
  item.dataset.documentId = doc.document_id;
  item.dataset.origin = doc.provenance.origin;
  const title = document.createElement("h3");
  title.className = "kb-doc-title";
  title.textContent = doc.title || doc.source;
  const source = document.createElement(/^https?:\/\//.test(doc.source) ? "a" : "span");
  source.className = "kb-doc-source";
  source.textContent = doc.source;
  if (source.tagName === "A") {
    source.href = doc.source;
    source.target = "_blank";
    source.rel = "noopener noreferrer";
  }
  const meta = document.createElement("p");
  meta.className = "kb-doc-meta";
  const origin = document.createElement("span");
  origin.className = "kb-origin";
  origin.textContent = originLabel(doc.provenance.origin);
  const about = [doc.company, doc.year || "", doc.language, `${t("kbAdded")} ${formatTime(doc.provenance.added_at)}`, t("kbChunks", doc.chunks)];
  meta.append(origin, " · ", about.filter(Boolean).join(" · "));
  item.append(title, source, meta);
  if (doc.provenance.question) {
    const provenance = document.createElement("p");
    provenance.className = "kb-doc-provenance";
    const score = doc.provenance.best_score == null ? "" : ` · ${t("score")} ${doc.provenance.best_score.toFixed(3)}`;
    provenance.textContent = t("kbFoundFor", doc.provenance.question) + score;
    item.append(provenance);
  }
  const actions = document.createElement("div");
  actions.className = "kb-doc-actions";
  const details = document.createElement("button");
  details.type = "button";
  details.className = "kb-details-button";
  details.textContent = t("kbDetails");
  details.setAttribute("aria-label", `${t("kbDetails")}: ${title.textContent}`);
  details.addEventListener("click", () => showDocument(doc.document_id, details));
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "kb-delete-button danger";
  remove.textContent = t("kbDelete");
  remove.setAttribute("aria-label", `${t("kbDelete")}: ${title.textContent}`);
  remove.addEventListener("click", () => confirmDelete(doc, remove));
  actions.append(details, remove);
  item.append(actions);
  return item;
}

function renderDocuments() {
  $("#kb-list").replaceChildren(...kb.documents.map(documentItem));
  $("#kb-more").hidden = !kb.nextToken;
  $("#kb-status").textContent = kb.documents.length ? t("kbCount", kb.documents.length, kb.total) : t("kbEmpty");
}

async function showDocument(documentId, opener) {
  const panel = $("#kb-details");
  try {
    const response = await fetch(`api/documents/${encodeURIComponent(documentId)}`, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(await errorMessage(response));
    const { document: doc, preview, facts = [] } = await response.json();
    const p = doc.provenance;
    const rows = [
      ["fTitle", doc.title], ["fSource", doc.source], ["fOrigin", originLabel(p.origin)],
      ["fAdded", formatTime(p.added_at)], ["fQuestion", p.question],
      ["fScore", p.best_score == null ? "" : p.best_score.toFixed(3)], ["fFound", p.found_at ? formatTime(p.found_at) : ""],
      ["fCompany", doc.company + (doc.aliases.length ? ` (${doc.aliases.join(", ")})` : "")],
      ["fYear", doc.year || ""], ["fQuarter", doc.quarter ? `Q${doc.quarter}` : ""], ["fType", doc.doc_type],
      ["fLanguage", doc.language], ["fPublished", doc.published_date], ["fChunks", String(doc.chunks)], ["fId", doc.document_id],
    ];
    const fields = $("#kb-details-fields");
    fields.replaceChildren();
    for (const [key, value] of rows) {
      if (value === "" || value == null) continue;
      const term = document.createElement("dt");
      term.textContent = t(key);
      const description = document.createElement("dd");
      description.textContent = value;
      description.dataset.field = key;
      fields.append(term, description);
    }
    $("#kb-details-title").textContent = doc.title || doc.source;
    $("#kb-details-preview").textContent = preview;
    showFacts(facts, doc.source);
    panel.dataset.documentId = doc.document_id;
    panel.hidden = false;
    kb.opener = opener;
    $("#kb-details-title").focus(); // keyboard and screen-reader users land on what they opened
  } catch (error) {
    $("#kb-status").textContent = `${t("failed")}: ${error.message}`;
  }
}

// The document's facts as a table, in the page's language (the labels stay as printed).
function showFacts(facts, source) {
  kb.facts = { facts, source }; // drawn again when the language changes
  const box = $("#kb-facts");
  box.hidden = !facts.length;
  $("tbody", box).replaceChildren();
  if (!facts.length) return;
  $("#kb-facts-count").textContent = t("factsCount", facts.length);
  const words = { page: (n) => t("pageShort", n), perShare: t("perShare"), shares: t("shares") };
  $("tbody", box).replaceChildren(...Facts.rows(facts, source, lang, words));
}

function confirmDelete(doc, opener) {
  const dialog = $("#kb-confirm");
  $("#kb-confirm-text").textContent = t("kbConfirm", doc.title || doc.source);
  dialog.dataset.documentId = doc.document_id;
  kb.opener = opener;
  dialog.showModal(); // modal: focus stays inside, Escape cancels; Cancel has the focus first
}

// Deleting needs an administrator's own token (the gateway never lends its default one for it). The page
// asks for it on a 401/403 and keeps it in this variable only: gone with the tab, never in storage.
const admin = { token: "" };

function sendDelete(documentId) {
  const headers = { Accept: "application/json" };
  if (admin.token) headers.Authorization = `Bearer ${admin.token}`;
  return fetch(`api/documents/${encodeURIComponent(documentId)}`, { method: "DELETE", headers });
}

// Resolves with the token typed in the dialog, or "" when the person cancels; `problem` says why it asks again.
function askAdminToken(problem) {
  const dialog = $("#admin-token-dialog");
  const input = $("#admin-token");
  const error = $("#admin-token-error");
  input.value = "";
  error.textContent = problem;
  error.hidden = !problem;
  dialog.returnValue = "";
  dialog.showModal();
  input.focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? input.value.trim() : ""), { once: true });
  });
}

async function deleteDocument(documentId) {
  const status = $("#kb-status");
  try {
    let response = await sendDelete(documentId);
    let problem = "";
    while (response.status === 401 || response.status === 403) {
      if (admin.token) problem = t("adminRefused", response.status); // a token was sent and not accepted
      admin.token = "";
      let token = await askAdminToken(problem);
      // A header holds visible ASCII only (a token never has more); ask again instead of failing the fetch.
      while (token && !/^[\x21-\x7e]+$/.test(token)) token = await askAdminToken(t("adminAscii"));
      if (!token) {
        status.textContent = t("adminCancelled");
        if (kb.opener?.isConnected) kb.opener.focus();
        return;
      }
      admin.token = token;
      response = await sendDelete(documentId);
    }
    if (!response.ok) throw new Error(await errorMessage(response));
    const reply = await response.json();
    kb.documents = kb.documents.filter((d) => d.document_id !== documentId);
    kb.total = Math.max(0, kb.total - 1);
    renderDocuments();
    if ($("#kb-details").dataset.documentId === documentId) $("#kb-details").hidden = true;
    status.textContent = t("kbDeleted", reply);
    $("#kb-refresh").focus(); // the row and its buttons are gone
  } catch (error) {
    status.textContent = `${t("failed")}: ${error.message}`;
  }
}

function setUpKnowledgeBase() {
  $("#kb-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    loadDocuments(false);
  });
  $("#kb-more").addEventListener("click", () => loadDocuments(true));
  $("#kb-details-close").addEventListener("click", () => {
    $("#kb-details").hidden = true;
    if (kb.opener?.isConnected) kb.opener.focus();
  });
  const dialog = $("#kb-confirm");
  $("#admin-token-cancel").addEventListener("click", () => $("#admin-token-dialog").close("cancel"));
  $("#kb-confirm-cancel").addEventListener("click", () => dialog.close("cancel"));
  $("#kb-confirm-delete").addEventListener("click", () => dialog.close("delete"));
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "delete") deleteDocument(dialog.dataset.documentId);
    else if (kb.opener?.isConnected) kb.opener.focus();
    dialog.returnValue = "";
  });
}

document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll(".lang button")) {
    button.addEventListener("click", () => applyLanguage(button.dataset.lang));
  }
  setUpTabs();
  setUpChat();
  setUpAdd();
  setUpKnowledgeBase();
  applyLanguage((navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en");
});
