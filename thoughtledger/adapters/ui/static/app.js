// The web app: sessions list, a session (with the live feed and the acts), analytics, search.
"use strict";
(function (global) {
  global.ThoughtLedgerApp = true;
  const { SessionView, el, plural, shortTime, readState } = global.ThoughtLedger;
  const Forks = global.ThoughtLedgerForks;
  const main = document.getElementById("main");
  let leave = () => {};
  let shown = 0; // which navigation the page is drawing: a slow answer for an earlier one is dropped

  async function getJson(url) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    // Signed out meanwhile (a revoked token, an ended sign-in): the page shows the sign-in.
    if (response.status === 401) location.reload();
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  // Who is signed in (with --auth), and the way out.
  let signedIn = Promise.resolve(null);
  async function whoAmI() {
    sessionStorage.removeItem("tl-reloaded");
    signedIn = getJson("/api/me").catch(() => null);
    const me = await signedIn;
    if (!me) return;
    if (!me.auth) return;
    document.getElementById("who-name").textContent = me.name + " (" + me.role + ")";
    document.getElementById("who").classList.remove("hidden");
    // The analytics count every session: only an auditor sees them.
    if (me.role !== "auditor") document.getElementById("nav-analytics").classList.add("hidden");
    document.getElementById("signout").addEventListener("click", async () => {
      await fetch("/api/signout", { method: "POST", headers: { Accept: "application/json" } });
      location.reload();
    });
  }

  function fail(error) {
    main.textContent = "";
    main.append(el("p", "error", error.message || String(error)));
  }

  // A number as a person reads it: 12,450 · 1.2 · 0.45 (no run of digits after the point).
  function num(value) {
    return Number(value).toLocaleString("en-US", { maximumFractionDigits: 2 });
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "-";
    if (seconds < 60) return seconds.toFixed(1) + " s";
    if (seconds < 3600) return (seconds / 60).toFixed(1) + " min";
    return (seconds / 3600).toFixed(1) + " h";
  }

  // -- sessions ---------------------------------------------------------------------------

  const STATUSES = ["", "open", "recorded", "revision", "branch", "complete", "cleared", "expired"];

  function sessionsPage() {
    document.title = "Sessions · thoughtledger";
    const query = new URLSearchParams(location.search);
    main.textContent = "";
    main.append(el("h1", null, "Sessions"));
    main.append(filterForm("/", query, [["agent", "agent", "text"], ["client", "client", "text"],
      ["status", "status", "select"], ["since", "started since", "datetime-local"],
      ["until", "started before", "datetime-local"]]));
    // The chain badge first: the audit promise is the column a person must never scroll to.
    const COLUMNS = [
      ["chain", "chain", "chain"], ["session", "session", "id"], ["agent", "agent · client", "who"],
      ["first", "first thought", "first"], ["thoughts", "thoughts", "num"],
      ["revisions", "revs", "num"], ["branches", "branches", "num"],
      ["duration", "duration", "num"], ["cost", "cost", "num"], ["status", "status", "status"],
      ["started", "started", "time"],
    ];
    const count = el("p", "muted count");
    count.id = "sessions-count";
    main.append(count);
    const table = el("table", "list sessions-table");
    table.id = "sessions";
    const colgroup = el("colgroup");
    for (const [key] of COLUMNS) colgroup.append(el("col", "col-" + key));
    const head = el("tr");
    let sortKey = null, sortDown = true;
    for (const [key, label] of COLUMNS) {
      const th = el("th");
      const sorter = el("button", "sorter", label);
      sorter.type = "button";
      sorter.dataset.key = key;
      sorter.title = "sort the sessions shown by " + label;
      sorter.addEventListener("click", () => {
        sortDown = sortKey === key ? !sortDown : key !== "session" && key !== "agent" && key !== "first";
        sortKey = key;
        sortRows();
      });
      th.append(sorter);
      th.setAttribute("aria-sort", "none");
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const body = el("tbody");
    table.append(colgroup, thead, body);
    main.append(table);
    const more = el("button", "hidden", "Older sessions");
    more.type = "button";
    more.id = "more";
    const note = el("p", "muted");
    main.append(more, note);
    let cursor = null;
    let total = null;
    // Sort the rows held (a click on a header; again: the other way round).
    function sortRows() {
      if (sortKey === null) return;
      const index = COLUMNS.findIndex(([key]) => key === sortKey);
      const rows = Array.from(body.children);
      const value = (tr) => tr.children[index].dataset.sort ?? tr.children[index].textContent;
      rows.sort((a, b) => {
        const x = value(a), y = value(b);
        const nx = Number(x), ny = Number(y);
        const order = x !== "" && y !== "" && !Number.isNaN(nx) && !Number.isNaN(ny) ? nx - ny : String(x).localeCompare(String(y));
        return sortDown ? -order : order;
      });
      body.append(...rows);
      head.querySelectorAll("th").forEach((th, i) => {
        th.setAttribute("aria-sort", i === index ? (sortDown ? "descending" : "ascending") : "none");
      });
    }
    function counted() {
      const shown = body.children.length;
      count.textContent = total === null ? plural(shown, "session") + " shown"
        : shown + " of " + plural(total, "session") + (shown < total ? " shown (older ones on demand)" : "");
    }
    function row(s) {
        const tr = el("tr");
        tr.dataset.session = s.sessionId;
        const link = el("a", "mono", s.sessionId.slice(0, 18));
        link.href = "/sessions/" + encodeURIComponent(s.sessionId);
        link.title = s.sessionId;
        const who = [s.agent, s.client].filter(Boolean).join(" · ") || "-";
        const cells = [
          ["…", null], [link, s.sessionId], [who, null], [s.first || "", null],
          [s.thoughts, s.thoughts], ["…", null], [s.branches, s.branches],
          [duration(s.seconds), s.seconds === null ? -1 : s.seconds], ["…", null],
          [s.status, null], [shortTime(s.startedAt).slice(0, 16), s.startedAt],
        ];
        cells.forEach(([cell, sort], i) => {
          const td = el("td", "cell-" + COLUMNS[i][0]);
          if (cell instanceof Node) td.append(cell); else td.textContent = String(cell);
          if (sort !== null && sort !== undefined) td.dataset.sort = String(sort);
          if (COLUMNS[i][2] === "num") td.classList.add("num");
          if (["who", "first"].includes(COLUMNS[i][2])) td.title = td.textContent;
          if (COLUMNS[i][2] === "time") td.title = shortTime(s.startedAt);
          if (i === 9) td.classList.add("status-" + s.status);
          tr.append(td);
        });
        return tr;
    }
    async function load() {
      const params = new URLSearchParams(query);
      params.set("limit", "50");
      if (cursor) params.set("cursor", cursor);
      const page = await getJson("/api/sessions?" + params);
      const ids = [];
      for (const s of page.sessions) {
        body.append(row(s));
        ids.push(s.sessionId);
      }
      const firstPage = cursor === null;
      cursor = page.next;
      more.classList.toggle("hidden", !cursor);
      // The total counts every session's row: asked for once, apart, the list drawn meanwhile.
      if (firstPage && cursor) {
        const counting = new URLSearchParams(query);
        getJson("/api/total?" + counting).then((found) => { total = found.total; counted(); })
          .catch(() => {});
      } else if (firstPage) {
        total = page.sessions.length;
      }
      sortRows();
      counted();
      const who = await signedIn;
      const own = who && who.auth && who.role !== "auditor";
      note.textContent = body.children.length ? "" : query.toString() ? "No sessions match."
        : own ? "No sessions of " + who.name + "'s yet: a " + who.role + " sees the sessions it started (an auditor sees every one)."
          : "No sessions yet: try thoughtledger demo.";
      badges(ids);
    }
    async function badges(ids) {
      for (let i = 0; i < ids.length; i += 25) {
        const found = await getJson("/api/badges?ids=" + ids.slice(i, i + 25).join(","));
        for (const b of found.badges) {
          const tr = body.querySelector('tr[data-session="' + CSS.escape(b.sessionId) + '"]');
          if (!tr) continue;
          const revs = tr.querySelector(".cell-revisions"), cost = tr.querySelector(".cell-cost");
          revs.textContent = b.revisions === null ? "-" : String(b.revisions);
          revs.dataset.sort = b.revisions === null ? "-1" : String(b.revisions);
          cost.textContent = b.cost === null ? "-" : "$" + b.cost;
          cost.dataset.sort = b.cost === null ? "-1" : String(b.cost);
          let badge;
          if (b.tooLong) {
            // Too long to read for a badge: the reason names the command that checks it.
            badge = el("span", "badge unknown", "not checked");
            badge.title = b.reason;
          } else {
            badge = el("span", "badge " + (b.ok ? "ok" : "bad"), b.ok ? "verified" : "broken");
            badge.title = b.ok ? plural(b.checked, "event") + " verified" : "version " + b.badVersion + ": " + b.reason;
          }
          const chain = tr.querySelector(".cell-chain");
          chain.textContent = "";
          chain.append(badge);
          chain.dataset.sort = b.tooLong ? "1" : b.ok ? "2" : "0";
        }
      }
    }
    // The newest sessions again, as the live socket tells of new events: a new one goes on
    // top, one already listed is drawn afresh (its thoughts, its status).
    async function refresh() {
      const params = new URLSearchParams(query);
      params.set("limit", "50");
      const page = await getJson("/api/sessions?" + params);
      const ids = [];
      let first = body.firstElementChild;
      for (const s of page.sessions) {
        const old = body.querySelector('tr[data-session="' + CSS.escape(s.sessionId) + '"]');
        const tr = row(s);
        if (old) {
          old.replaceWith(tr);
          if (old === first) first = tr;
        } else {
          tr.classList.add("fresh");
          body.insertBefore(tr, first);
        }
        ids.push(s.sessionId);
      }
      if (total !== null && body.children.length > total) total = body.children.length;
      note.textContent = body.children.length ? "" : note.textContent;
      sortRows();
      counted();
      badges(ids);
    }
    let pending = null;
    const mine = shown;
    more.addEventListener("click", () => load().catch(fail));
    load().then(() => {
      if (mine !== shown) return;
      const live = global.ThoughtLedgerLive.follow({
        sessions: "all",
        after: "now",
        onEvent: () => {
          // A burst of events (a run of thoughts) asks for the list once.
          if (pending === null) pending = setTimeout(() => { pending = null; refresh().catch(fail); }, 300);
        },
        onState: (on) => table.classList.toggle("live", on),
      });
      leave = () => {
        live.close();
        if (pending !== null) clearTimeout(pending);
      };
    }).catch(fail);
  }

  // Filters as a form whose values travel in the address (so a filtered view is a link).
  function filterForm(path, query, fields, action) {
    const form = el("form", "filters");
    form.setAttribute("role", "search");
    const inputs = {};
    for (const [name, label, type] of fields) {
      const wrap = el("label", null, label);
      let input;
      if (type === "select") {
        input = el("select");
        for (const s of STATUSES) {
          const option = el("option", null, s || "any");
          option.value = s;
          input.append(option);
        }
      } else {
        input = el("input");
        input.type = type;
      }
      input.name = name;
      const given = query.get(name) || "";
      input.value = type === "datetime-local" ? given.replace(/Z$/, "") : given;
      wrap.append(input);
      form.append(wrap);
      inputs[name] = input;
    }
    const apply = el("button", null, action || "Filter");
    apply.type = "submit";
    form.append(apply);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const next = new URLSearchParams();
      for (const [name, input] of Object.entries(inputs)) {
        if (input.value) next.set(name, input.type === "datetime-local" ? input.value + "Z" : input.value);
      }
      navigate(path + (next.toString() ? "?" + next : ""));
    });
    return form;
  }

  // -- one session ------------------------------------------------------------------------

  async function sessionPage(sessionId) {
    document.title = "Session " + sessionId.slice(0, 13) + " · thoughtledger";
    performance.mark("tl-fetch");
    const mine = shown;
    const payload = await getJson("/api/sessions/" + encodeURIComponent(sessionId));
    if (mine !== shown) return;
    performance.measure("tl-fetched-and-parsed", "tl-fetch");
    const wanted = readState(location.search);
    main.textContent = "";
    const view = new SessionView(main, payload, {
      version: wanted.version,
      compare: wanted.compare,
      onState: (v, compare, latest) => {
        const params = new URLSearchParams();
        if (v !== latest) params.set("v", String(v));
        if (compare !== null) params.set("compare", String(compare));
        const url = location.pathname + (params.toString() ? "?" + params : "");
        if (url !== location.pathname + location.search) history.replaceState(null, "", url);
      },
      verify: () => getJson("/api/sessions/" + encodeURIComponent(sessionId) + "/verify"),
    });
    performance.measure("tl-drawn", "tl-fetch");
    global.thoughtLedgerView = view; // for the benchmark and the curious, from the console
    global.ThoughtLedgerActs.attach(view, sessionId, { navigate });
    Forks.offerCompare(view, sessionId);
    Forks.listForks(view, sessionId, getJson, () => mine === shown)
      .catch((error) => view.forkNote.after(el("span", "error", "forks: " + error.message)));
    const onKey = (event) => view.onKey(event);
    document.addEventListener("keydown", onKey);
    let source = null;
    let closed = false;
    const dot = el("span", "live-dot");
    view.liveNote.append(dot, document.createTextNode("live"));
    function open() {
      source = new EventSource("/api/sessions/" + encodeURIComponent(sessionId) + "/live?after=" + view.lastPosition);
      source.onopen = () => dot.classList.add("on");
      source.onmessage = (message) => view.append(JSON.parse(message.data));
      // The reader was signed out (or its token revoked): the stream has ended for good.
      source.addEventListener("signed-out", () => {
        closed = true;
        source.close();
        location.reload();
      });
      source.onerror = () => {
        dot.classList.remove("on");
        source.close();
        // Reopen from the last event held, so nothing is missed or drawn twice.
        if (!closed) setTimeout(() => { if (!closed) open(); }, 1000);
      };
    }
    open();
    leave = () => {
      closed = true;
      if (source) source.close();
      document.removeEventListener("keydown", onKey);
    };
  }

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

  async function analyticsPage() {
    document.title = "Analytics · thoughtledger";
    const mine = shown;
    const stats = await getJson("/api/stats" + location.search);
    if (mine !== shown) return;
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
      for (const name of ["model", "thoughts", "cost"]) top.append(el("th", null, name));
      perModel.append(top);
      for (const m of stats.byModel) {
        const tr = el("tr");
        tr.append(el("td", null, m.model), el("td", "num", num(m.thoughts)), el("td", "num", m.cost === null ? "-" : "$" + m.cost.toFixed(4)));
        perModel.append(tr);
      }
      main.append(el("h2", null, "By model"), perModel);
    }
  }

  // -- search -----------------------------------------------------------------------------

  // The snippet as text nodes, each hit in a <mark> (never markup: a thought is someone's text).
  function marked(text, highlights) {
    const cell = el("td", "snippet");
    let at = 0;
    for (const [start, end] of highlights) {
      cell.append(document.createTextNode(text.slice(at, start)), el("mark", null, text.slice(start, end)));
      at = end;
    }
    cell.append(document.createTextNode(text.slice(at)));
    return cell;
  }

  async function searchPage() {
    document.title = "Search · thoughtledger";
    const mine = shown;
    const query = new URLSearchParams(location.search);
    const form = filterForm("/search", query, [["q", "words", "search"], ["agent", "agent", "text"],
      ["client", "client", "text"], ["since", "recorded since", "datetime-local"],
      ["until", "recorded before", "datetime-local"]], "Search");
    const words = query.get("q") || "";
    let found = null, refused = null;
    try {
      found = words.trim() ? await getJson("/api/search?" + query) : null;
    } catch (error) {
      refused = error; // a query the search cannot take: said under the form, which stays
    }
    if (mine !== shown) return;
    main.textContent = "";
    main.append(el("h1", null, "Search"), form);
    form.querySelector("input[name=q]").focus();
    if (refused) {
      const said = el("p", "error", refused.message);
      said.id = "search-error";
      main.append(said);
      return;
    }
    if (found === null) {
      main.append(el("p", "muted", 'Words a thought must all hold; "a phrase", prefix*, -excluded.'));
      return;
    }
    if (!found.results.length) {
      main.append(el("p", "muted", "No thought matches."));
      return;
    }
    // How many, then the hits grouped by session (in the order of each session's best hit).
    const sessions = new Map();
    for (const hit of found.results) {
      if (!sessions.has(hit.sessionId)) sessions.set(hit.sessionId, []);
      sessions.get(hit.sessionId).push(hit);
    }
    const count = el("p", "muted count", plural(found.results.length, "hit") + " in " +
      plural(sessions.size, "session") + (found.next ? " on this page (more on the next)" : ""));
    count.id = "search-count";
    main.append(count);
    const table = el("table", "list search-table");
    table.id = "search-results";
    const head = el("tr");
    for (const name of ["thought", "version · recorded", "text"]) head.append(el("th", null, name));
    const thead = el("thead");
    thead.append(head);
    table.append(thead);
    for (const [sessionId, hits] of sessions) {
      const group = el("tbody", "hit-group");
      const title = el("tr", "group-head");
      const cell = el("th");
      cell.colSpan = 3;
      const link = el("a", "mono", sessionId);
      link.href = "/sessions/" + encodeURIComponent(sessionId);
      cell.append("session ", link, " · " + plural(hits.length, "hit"));
      title.append(cell);
      group.append(title);
      for (const hit of hits) {
        const tr = el("tr", "hit");
        const where = el("td");
        const open = el("a", null, "#" + hit.thoughtNumber);
        open.href = hit.href;
        where.append(open);
        tr.append(where, el("td", "muted", "v" + hit.version + " · " + shortTime(hit.recordedAt)),
          marked(hit.snippet, hit.highlights));
        group.append(tr);
      }
      table.append(group);
    }
    main.append(table);
    if (found.next) {
      const more = new URLSearchParams(query);
      more.set("cursor", found.next);
      const link = el("a", "more", "Next page");
      link.href = "/search?" + more;
      main.append(link);
    }
  }

  // -- routing ----------------------------------------------------------------------------

  function route() {
    shown += 1;
    leave();
    leave = () => {};
    const path = location.pathname;
    const session = path.match(/^\/sessions\/([^/]+)$/);
    const compare = path.match(/^\/sessions\/([^/]+)\/compare$/);
    const mine = shown;
    let work;
    if (session) work = sessionPage(decodeURIComponent(session[1]));
    else if (compare) work = Forks.comparePage(main, decodeURIComponent(compare[1]), getJson, () => mine === shown);
    else if (path === "/analytics") work = analyticsPage();
    else if (path === "/search") work = searchPage();
    else if (path === "/review") {
      work = global.ThoughtLedgerReview.page(main, { getJson, signedIn, navigate, isShown: () => mine === shown });
      leave = () => global.ThoughtLedgerReview.leave();
    }
    else work = Promise.resolve(sessionsPage());
    Promise.resolve(work).catch(fail);
  }

  function navigate(url) {
    history.pushState(null, "", url);
    route();
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='/']");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(link.getAttribute("href"));
  });
  window.addEventListener("popstate", route);
  document.addEventListener("DOMContentLoaded", () => {
    whoAmI().catch(fail);
    route();
  });
})(window);
