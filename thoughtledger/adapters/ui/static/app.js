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
    else if (path === "/analytics") {
      work = global.ThoughtLedgerAnalytics.page(main, { getJson, filterForm, num, duration, isShown: () => mine === shown });
    }
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
