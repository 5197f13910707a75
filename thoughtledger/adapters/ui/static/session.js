// The session view: the tree of thoughts, the version slider, compare mode and the event
// inspector. Shared by the web app and the self-contained HTML export. This file holds the
// page's frame, time travel (slider and keys) and the export's start; the other parts load
// before it (session-model.js, session-tree.js, session-inspect.js, session-live.js,
// session-views.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { Timeline, el, plural, readState, shortTime } = parts;

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
      this.picked = null;       // the row a click picked (the slider stays where it is)
      this.build();
      // Drawn off the page, then put in at once: one layout instead of one per row.
      const card = this.tree.parentNode;
      this.tree.remove();
      for (const e of payload.events) this.add(e);
      this.orphans.before(this.tree); // below the view tabs, above the orphaned branches
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
      this.forkNote = el("span", "muted");
      this.forkNote.id = "fork-of";
      head.append(this.title, this.who, this.forkNote, this.liveNote);
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
      // Filter by annotation label: shown once a thought carries one (see markAnnotated).
      this.labelFilter = el("select");
      this.labelFilter.id = "label-filter";
      this.labelFilter.setAttribute("aria-label", "annotation label");
      this.labelFilter.append(el("option", null, "every thought"));
      this.labelFilter.options[0].value = "";
      this.labelFilter.classList.add("hidden");
      row.append(label, this.slider, this.versionText, compareLabel, this.labelFilter);
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
      this.buildViews(treeCard);
      // The right column: what the app lets a person do (above), and the inspector.
      const side = el("div", "side-col");
      this.inspector = el("aside", "inspector card");
      this.inspector.id = "inspector";
      this.actsSlot = el("div");
      side.append(this.actsSlot, this.inspector);
      layout.append(treeCard, side);
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
      this.labelFilter.addEventListener("change", () => this.filterByLabel(this.labelFilter.value));
      this.verifyButton.addEventListener("click", () => this.runVerify());
      this.tree.addEventListener("click", (event) => this.clicked(event));
      this.orphans.addEventListener("click", (event) => this.clicked(event));
    }

    // keepPick: the slider moved by itself (a live event), not by the person: a picked row stays.
    showVersion(v, first, keepPick) {
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
      // The slider moved: the inspector follows it again (a thought picked by a click is let go).
      if (!first && !keepPick && v !== this.version && this.picked) this.pick(null, true);
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

  // The other files' methods join the class; a name defined twice is a mistake, not an override.
  for (const part of [parts.Tree, parts.Inspect, parts.Live, parts.Views]) {
    const methods = Object.getOwnPropertyDescriptors(part.prototype);
    delete methods.constructor;
    for (const name of Object.keys(methods)) {
      if (name in SessionView.prototype) throw new Error("SessionView." + name + " defined twice");
    }
    Object.defineProperties(SessionView.prototype, methods);
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
