// The session view's readouts: the counts at a version, the event inspector, and compare mode
// (the events between two versions and what moved). Methods of SessionView (session.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { BRANCH_KINDS, el, isThought, plural, shortTime } = parts;

  class Inspect {
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

    // Pick a row (null: none) for the inspector; the slider does not move.
    pick(row, quiet) {
      if (this.picked) this.picked.classList.remove("picked");
      this.picked = row || null;
      if (this.picked) this.picked.classList.add("picked");
      this.markPicked();
      if (quiet) return;
      this.drawInspector();
    }

    // The event the inspector shows: the picked row's, else the slider's.
    get inspected() {
      const v = this.picked ? this.picked.tlv : this.version;
      return this.timeline.events[v - 1];
    }

    drawInspector() {
      const box = this.inspector;
      box.textContent = "";
      const e = this.inspected;
      if (this.options.onInspect) this.options.onInspect(e, this.version);
      if (!e) return;
      const picked = this.picked && e.v !== this.version ? " (picked; the slider is at " +
        this.version + ")" : "";
      box.append(el("h2", null, "Event at version " + e.v + picked));
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
        // Marks the page has no drawing of its own for, as the payload names them.
        for (const [name, value] of Object.entries(e.f || {})) fields.push([name, String(value)]);
      }
      const before = this.timeline.events[e.v - 2];
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
  }

  parts.Inspect = Inspect;
})(window);
