// The analytics page (/analytics): the stats figures, formatted, as charts that lead to the
// sessions behind them, and per agent and per model as tables. Loaded by the app (app.js).
"use strict";
(function (global) {
  const { el, plural } = global.ThoughtLedger;

  // -- analytics --------------------------------------------------------------------------

  const SVG = "http://www.w3.org/2000/svg";

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function chartCard(title, drawing, id) {
    const card = el("div", "card chart");
    if (id) card.id = id;
    card.append(el("h3", null, title));
    if (drawing) card.append(drawing); else card.append(el("p", "muted", "no data yet"));
    return card;
  }

  // Horizontal bars: one row per label, one or two values each.
  function bars(rows, format, legend) {
    if (!rows.length) return null;
    const width = 440, labelWidth = 150, rowHeight = legend ? 30 : 22;
    const height = rows.length * rowHeight + (legend ? 22 : 6);
    const max = Math.max(...rows.flatMap((r) => r.values.filter((v) => v !== null)), 1e-9);
    const root = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
    const span = width - labelWidth - 70;
    rows.forEach((row, i) => {
      const y = i * rowHeight + 4;
      const label = row.label.length > 22 ? row.label.slice(0, 21) + "…" : row.label;
      const text = svg("text", { x: 0, y: y + 12 }, label);
      if (row.href) {
        const link = svg("a", { href: row.href, class: "chart-link" });
        link.append(text);
        root.append(link);
      } else {
        root.append(text);
      }
      row.values.forEach((value, j) => {
        if (value === null) return;
        const h = legend ? 11 : 14;
        const w = Math.max(1, (Math.max(value, 0) / max) * span);
        const bar = svg("rect", { x: labelWidth, y: y + j * (h + 1), width: w, height: h, class: "bar" + (j + 1) });
        bar.append(svg("title", {}, row.label + ": " + format(value)));
        root.append(bar, svg("text", { x: labelWidth + w + 4, y: y + j * (h + 1) + h - 2 }, format(value)));
      });
    });
    if (legend) {
      legend.forEach((name, j) => {
        root.append(svg("rect", { x: labelWidth + j * 110, y: height - 14, width: 10, height: 10, class: "bar" + (j + 1) }),
          svg("text", { x: labelWidth + j * 110 + 14, y: height - 5 }, name));
      });
    }
    return root;
  }

  // Lines over days: rates in [0, 1], one line per series.
  function lines(days, series) {
    if (!days.length) return null;
    const width = 440, height = 200, left = 36, bottom = 40, top = 10;
    const root = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
    const max = Math.max(...series.flatMap((s) => s.values), 0.01);
    const x = (i) => left + (days.length === 1 ? (width - left - 10) / 2 : (i * (width - left - 10)) / (days.length - 1));
    const y = (v) => top + (1 - v / max) * (height - top - bottom);
    root.append(svg("line", { x1: left, y1: y(0), x2: width - 6, y2: y(0), class: "axis" }),
      svg("line", { x1: left, y1: top, x2: left, y2: y(0), class: "axis" }),
      svg("text", { x: 0, y: top + 8 }, (max * 100).toFixed(0) + "%"),
      svg("text", { x: 0, y: y(0) }, "0%"),
      svg("text", { x: left, y: height - bottom + 14 }, days[0]),
      svg("text", { x: width - 80, y: height - bottom + 14 }, days.length > 1 ? days[days.length - 1] : ""));
    series.forEach((s, j) => {
      const points = s.values.map((v, i) => x(i) + "," + y(v)).join(" ");
      root.append(svg("polyline", { points, class: "line" + (j + 1) }));
      s.values.forEach((v, i) => {
        const dot = svg("circle", { cx: x(i), cy: y(v), r: 3, class: "dot" + (j + 1) });
        dot.append(svg("title", {}, days[i] + " " + s.name + ": " + (v * 100).toFixed(1) + "%"));
        root.append(dot);
      });
      root.append(svg("rect", { x: left + j * 150, y: height - 16, width: 10, height: 10, class: "dot" + (j + 1) }),
        svg("text", { x: left + j * 150 + 14, y: height - 7 }, s.name));
    });
    return root;
  }

  async function page(main, app) {
    const { getJson, filterForm, num, duration } = app;
    document.title = "Analytics · thoughtledger";
    const stats = await getJson("/api/stats" + location.search);
    if (!app.isShown()) return;
    main.textContent = "";
    main.append(el("h1", null, "Analytics"));
    main.append(filterForm("/analytics", new URLSearchParams(location.search), [
      ["agent", "agent", "text"], ["client", "client", "text"],
      ["since", "started since", "datetime-local"], ["until", "started before", "datetime-local"]]));
    const o = stats.overall;
    const table = el("table", "figures card");
    const pct = (v) => (v * 100).toFixed(1) + "%";
    const signed = (v) => (v >= 0 ? "+" : "−") + Math.abs(v).toFixed(2);
    const loops = stats.loops;
    const loopsCell = el("span", null, loops.sessionsWithLoops === 0 ? "none" :
      num(loops.sessionsWithLoops) + " of " + plural(loops.sessions, "session") + " · " + plural(loops.repeats, "repeated thought") + " ");
    if (loops.sessionsWithLoops) {
      const review = el("a", null, "review them");
      review.href = "/review?loops=1";
      review.id = "review-loops";
      loopsCell.append(review);
    }
    for (const [name, value] of [
      ["sessions", num(o.sessions)], ["thoughts", num(o.thoughts)],
      ["completion rate", pct(o.completion_rate)], ["revision rate", pct(o.revision_rate)],
      ["branch rate", pct(o.branch_rate)], ["fan-out", num(o.fan_out) + " branches per branching session"],
      ["thoughts per session", "p50 " + num(o.thoughts_p50) + " · p95 " + num(o.thoughts_p95)],
      ["estimate drift", o.drift_mean === null ? "-" : "mean " + signed(o.drift_mean) + " · p50 " + signed(o.drift_p50) + " · p95 " + signed(o.drift_p95)],
      ["time between thoughts", o.gap_p50_seconds === null ? "-" : "p50 " + duration(o.gap_p50_seconds) + " · p95 " + duration(o.gap_p95_seconds)],
      ["loops", loopsCell],
    ]) {
      const tr = el("tr");
      const cell = el("td");
      if (value instanceof Node) cell.append(value); else cell.textContent = value;
      tr.append(el("td", "muted", name), cell);
      table.append(tr);
    }
    table.id = "figures";
    main.append(table);
    const charts = el("div", "charts");
    const agentName = (g) => (g.agent || "-") + (g.client ? " / " + g.client : "");
    // Each bar of an agent or a day links to the sessions behind it (the list, filtered).
    const agentHref = (g) => "/?" + new URLSearchParams(Object.entries({ agent: g.agent || "", client: g.client || "" }).filter(([, v]) => v));
    const dayHref = (day) => {
      const next = new Date(Date.parse(day + "T00:00:00Z") + 86400000).toISOString().slice(0, 10);
      return "/?" + new URLSearchParams({ since: day + "T00:00Z", until: next + "T00:00Z" });
    };
    const days = stats.by_day.map((d) => d.day);
    const rates = [
      { name: "revision rate", values: stats.by_day.map((d) => d.revision_rate) },
      { name: "branch rate", values: stats.by_day.map((d) => d.branch_rate) }];
    charts.append(
      chartCard("Sessions and thoughts per day", bars(stats.by_day.map((d) => ({ label: d.day, values: [d.sessions, d.thoughts], href: dayHref(d.day) })), num, ["sessions", "thoughts"]), "chart-days"),
      // A line needs two days; one day's rates read better as bars.
      chartCard("Revision and branch rates " + (days.length > 1 ? "over time" : "on " + (days[0] || "-")), days.length > 1 ? lines(days, rates)
        : bars(days.length ? [{ label: "revision rate", values: [rates[0].values[0]] }, { label: "branch rate", values: [rates[1].values[0]] }] : [], pct), "chart-rates"),
      chartCard("Thoughts per session by agent (p50, p95)", bars(stats.by_agent.map((g) => ({ label: agentName(g), values: [g.thoughts_p50, g.thoughts_p95], href: agentHref(g) })), num, ["p50", "p95"]), "chart-thoughts"),
      chartCard("Estimate drift by agent (mean of last − first totalThoughts)", bars(stats.by_agent.filter((g) => g.drift_mean !== null).map((g) => ({ label: agentName(g), values: [g.drift_mean], href: agentHref(g) })), signed), "chart-drift"),
      chartCard("Time between thoughts", o.gap_p50_seconds === null ? null : bars([
        { label: "p50", values: [o.gap_p50_seconds] }, { label: "p95", values: [o.gap_p95_seconds] }], duration), "chart-gaps"),
      chartCard("Annotations by label", bars(stats.byLabel.map((l) => ({ label: l.label, values: [l.annotations] })), num), "chart-labels"),
      chartCard("Thoughts by model", bars(stats.byModel.map((m) => ({ label: m.model, values: [m.thoughts] })), num), "chart-models"),
      chartCard("Cost by model", bars(stats.byModel.filter((m) => m.cost !== null).map((m) => ({ label: m.model, values: [m.cost] })), (v) => "$" + v.toFixed(4)), "chart-cost"),
    );
    main.append(charts);
    // Per agent and per model, as figures (the charts' numbers, side by side).
    const perAgent = el("table", "list card");
    perAgent.id = "by-agent";
    const headRow = el("tr");
    for (const name of ["agent / client", "sessions", "thoughts", "completion", "revision rate", "branch rate", "thoughts p50", "drift"]) headRow.append(el("th", null, name));
    perAgent.append(headRow);
    for (const g of stats.by_agent) {
      const tr = el("tr");
      const cell = el("td");
      const link = el("a", null, agentName(g));
      link.href = agentHref(g);
      cell.append(link);
      tr.append(cell);
      for (const value of [num(g.sessions), num(g.thoughts), pct(g.completion_rate), pct(g.revision_rate), pct(g.branch_rate), num(g.thoughts_p50), g.drift_mean === null ? "-" : signed(g.drift_mean)]) {
        tr.append(el("td", "num", value));
      }
      perAgent.append(tr);
    }
    main.append(el("h2", null, "By agent"), perAgent);
    if (stats.byModel.length) {
      const perModel = el("table", "list card");
      perModel.id = "by-model";
      const top = el("tr");
      // Captured: reasoning read from an agent's telemetry; its tokens, each call's once.
      for (const name of ["model", "thoughts", "captured", "reasoning tokens", "cost"]) top.append(el("th", null, name));
      perModel.append(top);
      for (const m of stats.byModel) {
        const tr = el("tr");
        const reasoning = m.reasoningTokens === null || m.reasoningTokens === undefined ? "-" : num(m.reasoningTokens);
        tr.append(el("td", null, m.model), el("td", "num", num(m.thoughts)), el("td", "num", num(m.captured || 0)),
          el("td", "num", reasoning), el("td", "num", m.cost === null ? "-" : "$" + m.cost.toFixed(4)));
        perModel.append(tr);
      }
      main.append(el("h2", null, "By model"), perModel);
    }
  }

  global.ThoughtLedgerAnalytics = { page };
})(window);
