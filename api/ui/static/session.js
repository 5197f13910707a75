// The session view: the tree of thoughts, the version slider, compare mode and the event
// inspector. Shared by the web app and the self-contained HTML export. Every text from the
// ledger enters the page through textContent, never as markup.
"use strict";
(function (global) {
  const BRANCH_KINDS = new Set(["branch.opened", "branch.extended"]);
  // Main-line rows go in chunks of this many: hiding a chunk is one change, and the browser
  // skips laying out chunks off screen (content-visibility), so a jump across 10,000
  // versions redraws a screenful, not the session.
  const CHUNK = 64;
  const THOUGHT_KINDS = new Set([
    "thought.recorded", "thought.revised", "branch.opened", "branch.extended",
  ]);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function plural(count, noun) {
    const many = noun.endsWith("ch") || noun.endsWith("s") ? noun + "es" : noun + "s";
    return count + " " + (count === 1 ? noun : many);
  }

  function shortTime(iso) {
    return iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "-";
  }

  function isThought(e) {
    return THOUGHT_KINDS.has(e.k) || e.gen === true;
  }

  function thoughtStatus(e) {
    if (!e.nx) return "complete";
    if (BRANCH_KINDS.has(e.k)) return "branch";
    if (e.k === "thought.revised") return "revision";
    return "recorded";
  }

  // What the session is after each version: prefix figures, so any version reads in O(1).
  class Timeline {
    constructor() {
      this.events = [];
      this.thoughts = [0];
      this.revisions = [0];
      this.branches = [0];
      this.total = [null];
      this.status = ["empty"];
      this.branchIds = new Set();
      this.ended = null;
    }

    push(e) {
      const i = this.events.length;
      this.events.push(e);
      let thoughts = this.thoughts[i], revisions = this.revisions[i];
      let total = this.total[i], status = this.status[i];
      if (isThought(e)) {
        thoughts += 1;
        if (e.k === "thought.revised") revisions += 1;
        if (e.b !== undefined && BRANCH_KINDS.has(e.k)) this.branchIds.add(e.b);
        total = e.tt;
        if (!this.ended) status = thoughtStatus(e);
      } else if (e.k === "session.cleared" || e.k === "session.expired") {
        this.ended = e.k === "session.cleared" ? "cleared" : "expired";
        status = this.ended;
      }
      this.thoughts.push(thoughts);
      this.revisions.push(revisions);
      this.branches.push(this.branchIds.size);
      this.total.push(total);
      this.status.push(status);
    }

    get latest() {
      return this.events.length ? this.events[this.events.length - 1].v : 0;
    }

    // Index into the prefix arrays for version v (versions run 1, 2, 3... without gaps).
    at(v) {
      const i = Math.max(0, Math.min(v, this.events.length));
      return {
        thoughts: this.thoughts[i], revisions: this.revisions[i], branches: this.branches[i],
        total: this.total[i], status: this.status[i],
      };
    }
  }

  class SessionView {
    // root: where to draw; payload: {sessionId, events}; options: {version, compare,
    // onState(version, compare), verify: async () => report | null}
    constructor(root, payload, options) {
      this.root = root;
      this.sessionId = payload.sessionId;
      this.options = options || {};
      this.timeline = new Timeline();
      this.items = [];          // [{v, node}] in version order: what a version shows or hides
      this.rows = new Map();    // version -> row element of that event
      this.mainByNumber = new Map(); // thought number -> main-line rows, in order
      this.branchGroups = new Map(); // branch id -> {group, list}
      this.meta = {};
      this.version = 0;
      this.compareFrom = null;
      this.followLatest = true;
      this.build();
      // Drawn off the page, then put in at once: one layout instead of one per row.
      const card = this.tree.parentNode;
      this.tree.remove();
      for (const e of payload.events) this.add(e);
      card.prepend(this.tree);
      const latest = this.timeline.latest;
      const wanted = this.options.version;
      const start = wanted && wanted >= 1 && wanted <= latest ? wanted : latest;
      this.followLatest = start === latest;
      this.slider.max = String(Math.max(latest, 1));
      this.showVersion(start, true);
      if (this.options.compare) this.setCompare(this.options.compare);
    }

    build() {
      const r = this.root;
      r.textContent = "";
      const head = el("div", "session-head");
      this.title = el("h1", "mono", "session " + this.sessionId);
      this.who = el("span", "muted");
      this.liveNote = el("span", "muted");
      head.append(this.title, this.who, this.liveNote);
      const controls = el("div", "controls");
      const row = el("div", "slider-row");
      const label = el("label", null, "version ");
      this.slider = el("input");
      this.slider.type = "range";
      this.slider.min = "1";
      this.slider.step = "1";
      this.slider.id = "version-slider";
      this.slider.setAttribute("aria-label", "version");
      label.htmlFor = "version-slider";
      this.versionText = el("span", "counts mono");
      this.compareBox = el("input");
      this.compareBox.type = "checkbox";
      this.compareBox.id = "compare-toggle";
      const compareLabel = el("label", null, " compare with version ");
      compareLabel.prepend(this.compareBox);
      this.compareInput = el("input");
      this.compareInput.type = "number";
      this.compareInput.min = "0";
      this.compareInput.id = "compare-from";
      this.compareInput.style.width = "6em";
      this.compareInput.disabled = true;
      compareLabel.append(this.compareInput);
      row.append(label, this.slider, this.versionText, compareLabel);
      this.verifyButton = el("button", null, "Verify chain");
      this.verifyButton.type = "button";
      this.verifyResult = el("span", "verify-result");
      if (this.options.verify) row.append(this.verifyButton, this.verifyResult);
      this.countsText = el("div", "counts");
      this.countsText.id = "counts";
      controls.append(row, this.countsText);
      this.compareBoxPanel = el("div", "compare card hidden");
      this.compareBoxPanel.id = "compare-panel";
      const layout = el("div", "layout");
      const treeCard = el("div", "card");
      this.tree = el("div", "tree");
      this.tree.id = "tree";
      this.chunk = null;
      this.chunkRows = 0;
      this.tree.setAttribute("aria-label", "thoughts");
      this.orphans = el("ol", "orphans");
      treeCard.append(this.tree, this.orphans);
      this.inspector = el("aside", "inspector card");
      this.inspector.id = "inspector";
      layout.append(treeCard, this.inspector);
      r.append(head, controls, this.compareBoxPanel, layout);
      this.slider.addEventListener("input", () => {
        this.showVersion(Number(this.slider.value));
      });
      this.compareBox.addEventListener("change", () => {
        this.compareInput.disabled = !this.compareBox.checked;
        if (this.compareBox.checked) {
          const from = Math.max(0, this.version - 1);
          this.compareInput.value = String(from);
          this.setCompare(from);
        } else {
          this.setCompare(null);
        }
      });
      this.compareInput.addEventListener("input", () => {
        const from = Number(this.compareInput.value);
        if (Number.isInteger(from)) this.setCompare(from);
      });
      this.verifyButton.addEventListener("click", () => this.runVerify());
      this.tree.addEventListener("click", (event) => this.clicked(event));
      this.orphans.addEventListener("click", (event) => this.clicked(event));
    }

    clicked(event) {
      const row = event.target.closest("li.thought, li.event, li.branch");
      if (row && row.tlv !== undefined) this.showVersion(row.tlv);
    }

    // Add one event (in version order): to the timeline, and its row to the tree.
    add(e) {
      if (e.v <= this.timeline.latest) return false; // already held (a live feed may repeat)
      // An intact link is sent once: the previous hash is the hash of the event before.
      if (e.ph === undefined) {
        const before = this.timeline.events[this.timeline.events.length - 1];
        e.ph = before ? before.h : "0".repeat(64);
      }
      this.timeline.push(e);
      if (e.k === "session.started") {
        this.meta = e.md || {};
        const who = [this.meta.agent, this.meta.client].filter(Boolean).join(" · ");
        this.who.textContent = who;
      }
      const row = isThought(e) ? this.thoughtRow(e) : this.eventRow(e);
      this.rows.set(e.v, row);
      if (isThought(e) && BRANCH_KINDS.has(e.k)) {
        this.placeInBranch(e, row);
      } else {
        this.mainList(e.v).append(row);
        if (isThought(e)) {
          const same = this.mainByNumber.get(e.n) || [];
          same.push(row);
          this.mainByNumber.set(e.n, same);
          if (e.rv !== undefined && (e.k === "thought.revised" || e.ir)) this.markRevised(e);
        }
      }
      this.items.push({ v: e.v, node: row });
      return true;
    }

    // The chunk the next main-line row goes in (a new one every CHUNK rows).
    mainList(v) {
      if (!this.chunk || this.chunkRows >= CHUNK) {
        this.chunk = el("ol", "chunk");
        this.chunkRows = 0;
        this.tree.append(this.chunk);
        this.items.push({ v, node: this.chunk });
      }
      this.chunkRows += 1;
      return this.chunk;
    }

    // A row is two elements: the text, and the row whose number and trailer are drawn by CSS
    // from two attributes (ten thousand rows build in a fraction of the time of six nodes each).
    thoughtRow(e) {
      const row = document.createElement("li");
      const revision = e.k === "thought.revised" || e.ir === true;
      row.className = "thought" + (revision ? " rev" : "") + (e.nx ? "" : " done");
      row.tlv = e.v;
      let head = "#" + e.n;
      if (revision) head += " ↺ revises" + (e.rv !== undefined ? " #" + e.rv : "") + ":";
      if (e.gen) head += " [" + e.m + "]";
      row.setAttribute("data-n", head);
      const who = e.gen ? e.m : (this.meta.agent || this.meta.client || "caller");
      const cost = e.c !== undefined && e.c !== null ? " · $" + e.c : "";
      row.setAttribute("data-t", (e.nx ? "" : "✓ done · ") + "v" + e.v + " · " +
        shortTime(e.at) + " · est. " + e.tt + " · " + who + cost);
      const text = document.createElement("span");
      text.className = e.rd ? "thought-text redacted" : "thought-text";
      text.textContent = e.x;
      row.append(text);
      return row;
    }

    eventRow(e) {
      const words = {
        "session.started": "session started",
        "session.cleared": "session cleared: " + (e.why || ""),
        "session.expired": "session " + (e.why || "expired"),
        "thought.redacted": "thought #" + e.n + " (v" + e.rdv + ") redacted: " + (e.why || ""),
      };
      const row = el("li", "event", (words[e.k] || e.k) + " · v" + e.v + " · " + shortTime(e.at));
      row.tlv = e.v;
      return row;
    }

    placeInBranch(e, row) {
      let group = this.branchGroups.get(e.b);
      if (!group) {
        const node = el("li", "branch");
        node.tlv = e.v;
        const origins = (this.mainByNumber.get(e.bf) || []).filter((r) => r.tlv < e.v);
        const note = origins.length ? "" : " (its origin is not on the main line)";
        node.append(el("div", "branch-label", "↳ branch " + e.b + " from #" + e.bf + note));
        const list = el("ol", "branch-thoughts");
        node.append(list);
        const parent = origins.length ? origins[origins.length - 1] : null;
        if (parent) {
          // After its origin's row and any branches already under it: the main line stays
          // one list of rows, each branch group just below the thought it forks from.
          let last = parent;
          while (last.nextElementSibling && last.nextElementSibling.classList.contains("branch")) {
            last = last.nextElementSibling;
          }
          last.after(node);
        } else {
          this.orphans.append(node);
        }
        group = { group: node, list };
        this.branchGroups.set(e.b, group);
        this.items.push({ v: e.v, node });
      }
      group.list.append(row);
    }

    markRevised(e) {
      const targets = (this.mainByNumber.get(e.rv) || []).filter((r) => r.tlv < e.v);
      if (!targets.length) return;
      const mark = el("span", "revised-by", "(revised by #" + e.n + ")");
      const target = targets[targets.length - 1];
      target.append(mark);
      this.items.push({ v: e.v, node: mark });
    }

    // Show or hide what changes between two versions: only the items in between are touched.
    toggleRange(from, to) {
      const lo = Math.min(from, to), hi = Math.max(from, to);
      const showing = to > from;
      for (let i = this.firstAfter(lo); i < this.items.length && this.items[i].v <= hi; i++) {
        this.items[i].node.classList.toggle("hidden", !showing);
      }
    }

    firstAfter(v) {
      let lo = 0, hi = this.items.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.items[mid].v <= v) lo = mid + 1; else hi = mid;
      }
      return lo;
    }

    showVersion(v, first) {
      const latest = this.timeline.latest;
      v = Math.max(latest ? 1 : 0, Math.min(v, latest));
      if (first) {
        for (let i = this.firstAfter(v); i < this.items.length; i++) {
          this.items[i].node.classList.add("hidden");
        }
      } else if (v !== this.version) {
        this.toggleRange(this.version, v);
      }
      const old = this.rows.get(this.version);
      if (old) old.classList.remove("selected");
      this.version = v;
      this.followLatest = v === latest;
      this.slider.value = String(v);
      const row = this.rows.get(v);
      if (row) row.classList.add("selected");
      this.drawCounts();
      this.drawInspector();
      if (this.compareFrom !== null) this.drawCompare();
      if (this.options.onState) this.options.onState(this.version, this.compareFrom, this.timeline.latest);
    }

    step(delta) {
      this.showVersion(this.version + delta);
      const row = this.rows.get(this.version);
      if (row) row.scrollIntoView({ block: "nearest" });
    }

    drawCounts() {
      const at = this.timeline.at(this.version);
      const latest = this.timeline.latest;
      this.versionText.textContent = this.version + " / " + latest;
      const e = this.timeline.events[this.version - 1];
      const parts = [
        plural(at.thoughts, "thought"), plural(at.revisions, "revision"),
        plural(at.branches, "branch"), "estimate " + (at.total === null ? "-" : at.total),
        at.status, e ? shortTime(e.at) : "",
      ];
      this.countsText.textContent = parts.join(" · ") +
        (this.version === latest ? " (now)" : " (as of version " + this.version + " of " + latest + ")");
    }

    drawInspector() {
      const box = this.inspector;
      box.textContent = "";
      const e = this.timeline.events[this.version - 1];
      if (!e) return;
      box.append(el("h2", null, "Event at version " + e.v));
      const dl = el("dl");
      const fields = [
        ["type", e.gen ? "thought.generated (" + e.k + ")" : e.k], ["position", e.p],
        ["version", e.v], ["event id", e.id], ["time", e.at], ["hash", e.h], ["previous", e.ph],
      ];
      if (isThought(e)) {
        fields.push(["thought", "#" + e.n + " of " + e.tt], ["next needed", String(e.nx)]);
        if (e.b !== undefined) fields.push(["branch", e.b + " from #" + e.bf]);
        if (e.rv !== undefined) fields.push(["revises", "#" + e.rv]);
        if (e.gen) fields.push(["model", e.m], ["guidance", e.g]);
      }
      const before = this.timeline.events[this.version - 2];
      if (before) {
        fields.push(["link", before.h === e.ph ? "previous hash matches version " + before.v
          : "previous hash differs from version " + before.v + "'s hash"]);
      }
      for (const [name, value] of fields) {
        dl.append(el("dt", null, name), el("dd", name === "hash" || name === "previous" ||
          name === "event id" ? "mono" : null, value));
      }
      box.append(dl);
    }

    setCompare(from) {
      if (this.compareFrom !== null) {
        for (let i = this.firstAfter(this.compareFrom); i < this.items.length; i++) {
          this.items[i].node.classList.remove("added");
        }
      }
      if (from === null || from === undefined || Number.isNaN(from)) {
        this.compareFrom = null;
        this.compareBox.checked = false;
        this.compareInput.disabled = true;
        this.compareBoxPanel.classList.add("hidden");
      } else {
        this.compareFrom = Math.max(0, Math.min(from, this.timeline.latest));
        this.compareBox.checked = true;
        this.compareInput.disabled = false;
        this.compareInput.value = String(this.compareFrom);
        this.drawCompare();
      }
      if (this.options.onState) this.options.onState(this.version, this.compareFrom, this.timeline.latest);
    }

    // The diff command's content, drawn: the events between two versions and what moved.
    drawCompare() {
      const a = Math.min(this.compareFrom, this.version), b = Math.max(this.compareFrom, this.version);
      for (let i = 0; i < this.items.length; i++) {
        const item = this.items[i];
        const added = item.v > a && item.v <= b;
        if (item.node.classList.contains("added") !== added) item.node.classList.toggle("added", added);
      }
      const panel = this.compareBoxPanel;
      panel.classList.remove("hidden");
      panel.textContent = "";
      panel.append(el("strong", null, "version " + a + " → " + b + " (" + plural(b - a, "event") + ")"));
      const list = el("ul", "diff-events mono");
      const shown = this.timeline.events.slice(a, Math.min(b, a + 200));
      for (const e of shown) {
        let text = "+ v" + e.v + " " + shortTime(e.at) + " " + e.k;
        if (isThought(e)) {
          text += "  #" + e.n;
          if (e.rv !== undefined && !BRANCH_KINDS.has(e.k)) text += " revises #" + e.rv;
          if (e.b !== undefined) text += " branch " + e.b + " from #" + e.bf;
          text += ": " + e.x;
        }
        list.append(el("li", null, text));
      }
      if (b - a > shown.length) list.append(el("li", "muted", "… and " + (b - a - shown.length) + " more"));
      panel.append(list);
      const table = el("table");
      const header = el("tr");
      header.append(el("th"), el("th", null, "at " + a), el("th", null, "at " + b));
      table.append(header);
      const x = this.timeline.at(a), y = this.timeline.at(b);
      for (const [name, key] of [["thoughts", "thoughts"], ["revisions", "revisions"],
        ["branches", "branches"], ["totalThoughts", "total"], ["status", "status"]]) {
        const tr = el("tr", x[key] !== y[key] ? "changed" : null);
        tr.append(el("td", null, name), el("td", null, x[key] === null ? "-" : x[key]),
          el("td", null, (y[key] === null ? "-" : y[key]) + (x[key] !== y[key] ? " *" : "")));
        table.append(tr);
      }
      panel.append(table);
    }

    async runVerify() {
      this.verifyResult.textContent = " walking the chain…";
      this.verifyResult.className = "verify-result muted";
      let report;
      try {
        report = await this.options.verify();
      } catch (error) {
        this.verifyResult.textContent = " could not verify: " + error.message;
        this.verifyResult.className = "verify-result error";
        return;
      }
      if (report.ok) {
        this.verifyResult.textContent = " ✓ chain verified: " + plural(report.checked, "event");
        this.verifyResult.className = "verify-result badge ok";
      } else {
        const where = ["version " + report.version];
        if (report.eventId) where.push("event " + report.eventId);
        if (report.position) where.push("position " + report.position);
        this.verifyResult.textContent = " ✗ broken at " + where.join(", ") + ": " + report.reason;
        this.verifyResult.className = "verify-result badge bad";
        if (report.version && this.rows.has(report.version)) this.showVersion(report.version);
      }
    }

    // A new event from the live feed: drawn at once; the slider follows if it was at the end.
    append(e) {
      const follow = this.followLatest;
      if (!this.add(e)) return;
      const latest = this.timeline.latest;
      this.slider.max = String(latest);
      const node = this.items[this.items.length - 1].node;
      node.classList.toggle("hidden", !follow);
      // Rows added with it (a branch group) share its version.
      for (let i = this.items.length - 1; i >= 0 && this.items[i].v === e.v; i--) {
        this.items[i].node.classList.toggle("hidden", !follow);
      }
      if (follow) this.showVersion(latest); else this.drawCounts();
    }

    get lastPosition() {
      const events = this.timeline.events;
      return events.length ? events[events.length - 1].p : 0;
    }

    // ← / → step through versions; Home / End jump to the first and the last.
    onKey(event) {
      const target = event.target;
      if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" ||
                     target.tagName === "TEXTAREA")) {
        if (target !== this.slider) return;
        event.preventDefault(); // one step per key, whatever the range input would do
      }
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const moves = { ArrowLeft: -1, ArrowRight: 1 };
      if (event.key in moves) {
        event.preventDefault();
        this.step(moves[event.key]);
      } else if (event.key === "Home") {
        event.preventDefault();
        this.showVersion(1);
      } else if (event.key === "End") {
        event.preventDefault();
        this.showVersion(this.timeline.latest);
      }
    }
  }

  function readState(text) {
    const params = new URLSearchParams(text);
    const version = Number(params.get("v"));
    const compare = params.get("compare");
    return {
      version: Number.isInteger(version) && version > 0 ? version : null,
      compare: compare !== null && compare !== "" && Number.isInteger(Number(compare)) ? Number(compare) : null,
    };
  }

  global.ThoughtLedger = { SessionView, el, plural, shortTime, readState };

  // The HTML export: the session's events are embedded; the page works with no server.
  document.addEventListener("DOMContentLoaded", () => {
    const data = document.getElementById("tl-data");
    if (!data || global.ThoughtLedgerApp) return;
    const payloads = JSON.parse(data.textContent);
    const main = document.getElementById("main");
    const wanted = readState(location.hash.slice(1));
    const views = [];
    for (const payload of payloads) {
      const section = el("section", "exported");
      main.append(section);
      views.push(new SessionView(section, payload, {
        version: payloads.length === 1 ? wanted.version : null,
        compare: payloads.length === 1 ? wanted.compare : null,
        onState: (v, compare) => {
          if (payloads.length !== 1) return;
          const hash = "v=" + v + (compare !== null ? "&compare=" + compare : "");
          history.replaceState(null, "", "#" + hash);
        },
      }));
    }
    let active = views[0];
    document.addEventListener("focusin", (event) => {
      const hit = views.find((view) => view.root.contains(event.target));
      if (hit) active = hit;
    });
    document.addEventListener("keydown", (event) => { if (active) active.onKey(event); });
  });
})(window);
