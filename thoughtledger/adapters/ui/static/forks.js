// Forks in the web app: a session's forks under its heading, and a fork beside its source from
// the fork point on (/sessions/FORK/compare). Every text from the ledger enters the page
// through textContent, never as markup.
"use strict";
(function (global) {
  const { el, plural, shortTime } = global.ThoughtLedger;

  function sessionLink(sessionId, href, text) {
    const link = el("a", "mono", text || sessionId);
    link.href = href || "/sessions/" + encodeURIComponent(sessionId);
    return link;
  }

  // The forks this reader may see, listed under the session's heading (nothing when none).
  async function listForks(view, sessionId, getJson, isCurrent) {
    const found = await getJson("/api/sessions/" + encodeURIComponent(sessionId) + "/forks");
    if (!found.forks.length || !isCurrent()) return;
    const box = el("section", "card forks");
    box.id = "forks";
    box.append(el("h2", null, plural(found.forks.length, "fork") + (found.more ? " (the first)" : "")));
    const table = el("table", "list");
    const head = el("tr");
    for (const name of ["fork", "at version", "agent", "started", ""]) head.append(el("th", null, name));
    table.append(head);
    for (const fork of found.forks) {
      const tr = el("tr");
      tr.dataset.session = fork.sessionId;
      const id = el("td");
      id.append(sessionLink(fork.sessionId, fork.href));
      const compare = el("td");
      compare.append(sessionLink(fork.sessionId, fork.href + "/compare", "compare"));
      tr.append(id, el("td", "num", fork.version), el("td", null, fork.agent || "-"),
        el("td", null, shortTime(fork.startedAt)), compare);
      table.append(tr);
    }
    box.append(table);
    view.root.querySelector(".session-head").after(box);
  }

  // On a fork's own page: the way to its comparison, beside "forked from ...".
  function offerCompare(view, sessionId) {
    if (!view.forkNote.textContent) return;
    const link = el("a", null, "compare with the source");
    link.id = "compare-link";
    link.href = "/sessions/" + encodeURIComponent(sessionId) + "/compare";
    view.forkNote.append(" · ", link);
  }

  function side(title, link, thoughts, total, className) {
    const column = el("section", "card side " + className);
    const heading = el("h2");
    heading.append(title, link);
    column.append(heading);
    if (total === null) {
      column.append(el("p", "muted unreadable", "You may not read the source session."));
      return column;
    }
    const count = plural(total, "thought") + " after the fork point";
    column.append(el("p", "muted count", thoughts.length < total ? count + " (the first " + thoughts.length + " shown)" : count));
    const list = el("ol", "compared");
    for (const t of thoughts) {
      const item = el("li", "status-" + t.status);
      item.dataset.version = String(t.version);
      const mark = el("span", "mono muted", "#" + t.number + " v" + t.version +
        (t.branch ? " branch " + t.branch : "") + (t.revises ? " revises #" + t.revises : ""));
      item.append(mark, el("div", t.redacted ? "text redacted" : "text", t.text));
      list.append(item);
    }
    column.append(list);
    return column;
  }

  // The fork beside its source: what both hold, then each side's own thoughts.
  async function comparePage(main, forkId, getJson, isCurrent) {
    document.title = "Compare " + forkId.slice(0, 13) + " · thoughtledger";
    const found = await getJson("/api/sessions/" + encodeURIComponent(forkId) + "/compare");
    if (!isCurrent()) return;
    main.textContent = "";
    const title = el("h1");
    title.append("fork ", sessionLink(found.sessionId, found.href), " beside its source");
    const common = el("p", "common");
    common.id = "common";
    common.append(plural(found.common, "thought") + " in common up to version " + found.version + " of ",
      sessionLink(found.source.sessionId, found.source.href));
    const sides = el("div", "sides");
    sides.append(
      side("source ", sessionLink(found.source.sessionId), found.source.thoughts,
        found.source.readable ? found.source.total : null, "source-side"),
      side("fork ", sessionLink(found.sessionId, found.href), found.fork.thoughts, found.fork.total, "fork-side"));
    main.append(title, common, sides);
  }

  global.ThoughtLedgerForks = { listForks, offerCompare, comparePage };
})(window);
