// The session view's other two ways of looking: a timeline (one bar per thought by its recorded
// time, a lane for the main line, one per branch, one for the actions an agent took (where the
// ledger captured any) and one for the other events, the longest
// gaps named) and a graph (thoughts as nodes, the main line, revisions and branches as edges, a
// fork's source marked). Both are drawn from the events the page holds, when their tab is
// opened, and again as events arrive; a click on a bar or a node picks that thought, as a
// click in the tree does, without moving the slider. Methods of SessionView (session.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { BRANCH_KINDS, el, isThought, plural, shortTime } = parts;
  const SVG = "http://www.w3.org/2000/svg";
  const GAPS_NAMED = 3;
  const GRAPH_MARGIN = 1200; // pixels drawn beyond the graph's visible part, above and below

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const key in attrs) node.setAttribute(key, String(attrs[key]));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function seconds(s) {
    if (s < 1) return Math.round(s * 1000) + " ms";
    if (s < 60) return s.toFixed(1) + " s";
    if (s < 3600) return (s / 60).toFixed(1) + " min";
    if (s < 86400) return (s / 3600).toFixed(1) + " h";
    return (s / 86400).toFixed(1) + " d";
  }

  function short(text, most) {
    const one = String(text || "").replace(/\s+/g, " ");
    return one.length > most ? one.slice(0, most - 1) + "…" : one;
  }

  // What the graph and the timeline are drawn from: the thoughts, their lanes and their links.
  // Kept in step with the export's Mermaid graph (adapters/ui/graph.py), which reads the same
  // short keys.
  function shape(events) {
    const nodes = [];
    const edges = [];
    const lanes = new Map([["", 0]]); // "" the main line; then each branch as it opens
    const lastOfNumber = new Map();   // main-line thought number -> its latest node
    const lastInLane = new Map();
    let fork = null;
    for (const e of events) {
      if (e.k === "session.started" && e.fork) fork = e.fork;
      if (!isThought(e)) continue;
      const branch = e.b !== undefined && BRANCH_KINDS.has(e.k) ? String(e.b) : "";
      if (!lanes.has(branch)) lanes.set(branch, lanes.size);
      const revision = e.k === "thought.revised" || e.ir === true;
      const node = { v: e.v, n: e.n, lane: lanes.get(branch), branch, revision, e };
      const before = lastInLane.get(branch);
      if (before) {
        edges.push({ from: before, to: node, kind: "next" });
      } else if (branch) {
        const origin = lastOfNumber.get(e.bf);
        if (origin) edges.push({ from: origin, to: node, kind: "branch", label: branch });
      }
      if (revision && e.rv !== undefined && lastOfNumber.has(e.rv)) {
        edges.push({ from: lastOfNumber.get(e.rv), to: node, kind: "revises" });
      }
      lastInLane.set(branch, node);
      if (!branch) lastOfNumber.set(e.n, node);
      nodes.push(node);
    }
    return { nodes, edges, lanes, fork };
  }

  class Views {
    // The tabs above the tree: Tree, Timeline, Graph.
    buildViews(card) {
      const tabs = el("div", "view-tabs");
      tabs.setAttribute("role", "tablist");
      this.viewBoxes = {};
      this.viewTabs = {};
      this.shownView = "tree";
      for (const [name, label] of [["tree", "Tree"], ["timeline", "Timeline"], ["graph", "Graph"]]) {
        const tab = el("button", name === "tree" ? "tab on" : "tab", label);
        tab.type = "button";
        tab.id = "tab-" + name;
        tab.setAttribute("role", "tab");
        tab.addEventListener("click", () => this.showView(name));
        tabs.append(tab);
        this.viewTabs[name] = tab;
      }
      this.viewBoxes.timeline = el("div", "timeline hidden");
      this.viewBoxes.timeline.id = "timeline";
      this.viewBoxes.graph = el("div", "graph hidden");
      this.viewBoxes.graph.id = "graph";
      card.prepend(tabs);
      card.append(this.viewBoxes.timeline, this.viewBoxes.graph);
      for (const name of ["timeline", "graph"]) {
        this.viewBoxes[name].addEventListener("click", (event) => {
          const hit = event.target.closest("[data-v]");
          if (hit) this.pick(this.rows.get(Number(hit.dataset.v)) || null);
        });
      }
    }

    showView(name) {
      this.shownView = name;
      for (const [each, tab] of Object.entries(this.viewTabs)) {
        tab.classList.toggle("on", each === name);
        tab.setAttribute("aria-selected", String(each === name));
      }
      this.tree.classList.toggle("hidden", name !== "tree");
      this.orphans.classList.toggle("hidden", name !== "tree");
      for (const [each, box] of Object.entries(this.viewBoxes)) box.classList.toggle("hidden", each !== name);
      this.drawView();
    }

    // Draw the view shown (live events: at most twice a second).
    drawView(soon) {
      if (this.shownView === "tree") return;
      if (soon) {
        if (!this.viewPending) this.viewPending = setTimeout(() => { this.viewPending = null; this.drawView(); }, 500);
        return;
      }
      const box = this.viewBoxes[this.shownView];
      box.textContent = "";
      box.onscroll = null;
      const drawn = shape(this.timeline.events);
      if (!drawn.nodes.length) {
        box.append(el("p", "muted", "No thoughts yet."));
        return;
      }
      if (this.shownView === "timeline") this.drawTimeline(box, drawn); else this.drawGraph(box, drawn);
      this.markPicked();
    }

    markPicked() {
      const v = this.picked ? this.picked.tlv : null;
      for (const box of Object.values(this.viewBoxes || {})) {
        const old = box.querySelector(".picked");
        if (old) old.classList.remove("picked");
        const hit = v === null ? null : box.querySelector('[data-v="' + v + '"]');
        if (hit) hit.classList.add("picked");
      }
    }

    drawTimeline(box, drawn) {
      const events = this.timeline.events;
      const time = (e) => Date.parse(e.at);
      const start = time(events[0]), end = Math.max(time(events[events.length - 1]), start + 1);
      const laneNames = Array.from(drawn.lanes.keys());
      // The tools an agent called (captured with its reasoning) on a lane of their own, where
      // the ledger has any; then one for the other events.
      const acting = events.some((e) => e.k === "action.taken");
      const actionsLane = laneNames.length, otherLane = laneNames.length + (acting ? 1 : 0);
      const rows = otherLane + 1;
      const room = Math.max(box.clientWidth || 800, 400), left = 110, right = 10, lane = 24, top = 18;
      const height = top + rows * lane + 26;
      // Each event at its time, but never closer than STEP to the one before: thoughts written
      // in a burst stay apart (the timeline then scrolls), and a wait still shows as space.
      const STEP = 4;
      const scale = (room - left - right) / (end - start);
      const place = new Map();
      let last = left - STEP;
      for (const e of events) {
        last = Math.max(left + (time(e) - start) * scale, last + STEP);
        place.set(e.v, last);
      }
      const width = Math.max(room, last + right);
      const x = (e) => place.get(e.v);
      const root = svg("svg", { width, height, role: "img", "aria-label": "timeline" });
      laneNames.forEach((name, i) => {
        root.append(svg("text", { x: 0, y: top + i * lane + 15, class: "lane" }, name ? "branch " + short(name, 12) : "main line"));
      });
      if (acting) root.append(svg("text", { x: 0, y: top + actionsLane * lane + 15, class: "lane" }, "actions"));
      root.append(svg("text", { x: 0, y: top + otherLane * lane + 15, class: "lane" }, "other events"));
      // Gaps: the thought's bar runs from the event before it; the longest waits are named.
      const gaps = [];
      let before = null;
      const byVersion = new Map(drawn.nodes.map((node) => [node.v, node]));
      for (const e of events) {
        const at = time(e);
        const from = before === null ? at : time(before);
        const node = byVersion.get(e.v);
        const x1 = x(e), x0 = before === null ? x1 - STEP : x(before);
        if (node) {
          const y = top + node.lane * lane + 4;
          const bar = svg("rect", {
            x: x0, y, width: Math.max(x1 - x0, 2), height: lane - 8, "data-v": e.v,
            class: "bar " + (node.branch ? "branch" : node.revision ? "revision" : e.cap ? "captured" : "main"),
          });
          bar.append(svg("title", {}, "#" + e.n + " · v" + e.v + " · " + shortTime(e.at) +
            " · took " + seconds((at - from) / 1000) + " · " + short(e.x, 80)));
          root.append(bar);
          if (e.gen && e.ms !== undefined) {
            // The model's own time, at the end of the bar: the rest of the wait was elsewhere.
            const lx = Math.max(x0, x1 - e.ms * scale);
            const model = svg("rect", { x: lx, y: y + 3, width: Math.max(x1 - lx, 2), height: lane - 14, class: "latency", "data-v": e.v });
            const tokens = e.tk ? " · " + (e.tk[0] ?? "?") + " + " + (e.tk[1] ?? "?") + " tokens" : "";
            model.append(svg("title", {}, "model " + e.m + " · " + seconds(e.ms / 1000) + tokens));
            root.append(model);
          }
        } else {
          const action = e.k === "action.taken";
          const mark = svg("rect", { x: x1 - 2, y: top + (action ? actionsLane : otherLane) * lane + 4, width: 3,
            height: lane - 8, class: action ? "bar action" : "bar other", "data-v": e.v });
          mark.append(svg("title", {}, (action ? "called " + e.act + (e.n !== undefined ? " after #" + e.n : "") : e.k) +
            " · v" + e.v + " · " + shortTime(e.at)));
          root.append(mark);
        }
        if (before !== null) gaps.push({ seconds: (at - from) / 1000, x0, x1 });
        before = e;
      }
      gaps.sort((a, b) => b.seconds - a.seconds);
      const named = gaps.slice(0, GAPS_NAMED).filter((g) => g.seconds > 0 && g.x1 - g.x0 > 40);
      for (const g of named) {
        root.prepend(svg("rect", { x: g.x0, y: top, width: g.x1 - g.x0, height: rows * lane, class: "gap-span" }));
        root.append(svg("text", { x: (g.x0 + g.x1) / 2, y: 12, class: "gap" }, "gap " + seconds(g.seconds)));
      }
      root.append(svg("text", { x: left, y: height - 6, class: "axis" }, shortTime(events[0].at)),
        svg("text", { x: width - right, y: height - 6, class: "axis end" }, shortTime(events[events.length - 1].at)));
      // Where the slider stands.
      const now = this.timeline.events[this.version - 1];
      if (now) root.append(svg("line", { x1: x(now), x2: x(now), y1: top, y2: height - 20, class: "cursor" }));
      box.append(el("p", "muted", plural(drawn.nodes.length, "thought") + " over " + seconds((end - start) / 1000) +
        (named.length ? "; longest gap " + seconds(named[0].seconds) : "")), root);
    }

    drawGraph(box, drawn) {
      const column = 150, row = 26, left = 16, top = drawn.fork ? 44 : 16;
      const lanes = drawn.lanes.size;
      const width = left + lanes * column + 260, height = top + drawn.nodes.length * row + 10;
      const root = svg("svg", { width, height, role: "img", "aria-label": "graph" });
      const at = new Map();
      drawn.nodes.forEach((node, i) => at.set(node, { cx: left + node.lane * column + 8, cy: top + i * row + 8 }));
      if (drawn.fork) {
        const first = at.get(drawn.nodes[0]);
        root.append(svg("text", { x: left, y: 14, class: "fork-point" },
          "⑂ forked from " + short(drawn.fork.s, 18) + " at version " + drawn.fork.v),
          svg("line", { x1: first.cx, y1: 20, x2: first.cx, y2: first.cy - 7, class: "edge fork" }));
      }
      // Fork points: a thought that branches open below it.
      const origins = new Set(drawn.edges.filter((edge) => edge.kind === "branch").map((edge) => edge.from));
      // Only what is near the visible part is drawn (again as it scrolls): a graph of 10,000
      // thoughts costs a screenful of elements, not 30,000.
      const layer = svg("g");
      root.append(layer);
      const drawWindow = () => {
        const lo = box.scrollTop - GRAPH_MARGIN, hi = box.scrollTop + (box.clientHeight || 800) + GRAPH_MARGIN;
        const pieces = document.createDocumentFragment();
        for (const edge of drawn.edges) {
          const a = at.get(edge.from), b = at.get(edge.to);
          if (Math.max(a.cy, b.cy) < lo || Math.min(a.cy, b.cy) > hi) continue;
          const path = edge.kind === "revises"
            ? "M" + (a.cx - 7) + "," + a.cy + " C" + (a.cx - 40) + "," + a.cy + " " + (b.cx - 40) + "," + b.cy + " " + (b.cx - 7) + "," + b.cy
            // Down its own lane, then across on the row it reaches (where no other label is).
            : a.cx === b.cx ? "M" + a.cx + "," + a.cy + " L" + b.cx + "," + b.cy
              : "M" + a.cx + "," + a.cy + " Q" + a.cx + "," + b.cy + " " + b.cx + "," + b.cy;
          pieces.append(svg("path", { d: path, class: "edge " + edge.kind }));
        }
        const first = Math.max(0, Math.floor((lo - top) / row));
        const last = Math.min(drawn.nodes.length, Math.ceil((hi - top) / row) + 1);
        for (let i = first; i < last; i++) {
          const node = drawn.nodes[i], p = at.get(node);
          const group = svg("g", { "data-v": node.v, class: "node " + (node.branch ? "branch" : node.revision ? "revision" : "main") + (origins.has(node) ? " origin" : "") });
          group.append(svg("circle", { cx: p.cx, cy: p.cy, r: origins.has(node) ? 7 : 5 }),
            svg("text", { x: p.cx + 12, y: p.cy + 4 }, "#" + node.n + (node.revision ? " ↺" : "") + " " + short(node.e.x, 36)));
          group.append(svg("title", {}, "#" + node.n + " · v" + node.v + (node.branch ? " · branch " + node.branch : "") + " · " + short(node.e.x, 200)));
          pieces.append(group);
        }
        layer.textContent = "";
        layer.append(pieces);
        this.markPicked();
      };
      let queued = false;
      box.onscroll = () => {
        if (queued) return;
        queued = true;
        requestAnimationFrame(() => { queued = false; drawWindow(); });
      };
      box.append(el("p", "muted", [plural(drawn.nodes.length, "thought"), plural(lanes - 1, "branch"),
        plural(drawn.edges.filter((e) => e.kind === "revises").length, "revision"),
        plural(origins.size, "fork point")].join(" · ")), root);
      drawWindow();
    }
  }

  parts.Views = Views;
  parts.graphShape = shape;
})(window);
