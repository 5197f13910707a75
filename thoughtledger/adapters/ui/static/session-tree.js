// The session view's tree: one row per event (thoughts, branches under the thought they fork
// from, an agent's actions under the thought before them, other events), and which rows a
// version shows. Methods of SessionView (session.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { BRANCH_KINDS, el, isThought, shortTime } = parts;
  // Main-line rows go in chunks of this many: hiding a chunk is one change, and the browser
  // skips laying out chunks off screen (content-visibility), so a jump across 10,000
  // versions redraws a screenful, not the session.
  const CHUNK = 64;
  // An action's arguments shown in its row (up to 8,192 characters are kept).
  const ACTION_ARGS_SHOWN = 200;

  // An annotation in words: its label, score, author and note.
  function annotation(e) {
    const score = e.sc !== undefined ? " (" + e.sc + ")" : "";
    const by = e.by !== undefined ? " by " + e.by : "";
    const note = e.rd ? ": [redacted]" : e.nt !== undefined ? ": " + e.nt : "";
    return e.lb + score + by + note;
  }

  class Tree {
    // A click picks a row for the inspector (and the acts) without moving the slider: what
    // the version shows stays on screen.
    clicked(event) {
      if (event.target.closest("a, button, input, textarea, select")) return;
      const row = event.target.closest("li.thought, li.event");
      if (row && row.tlv !== undefined) this.pick(row);
    }

    // A fork names its source and version: link to the source as it was there (its thoughts
    // up to that version are this session's first ones).
    showForkOf(fork) {
      const link = el("a", "mono", fork.s);
      link.href = "/sessions/" + encodeURIComponent(fork.s) + "?v=" + fork.v;
      this.forkNote.textContent = "";
      this.forkNote.append("forked from ", link, " at version " + fork.v);
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
        if (e.fork) this.showForkOf(e.fork);
      }
      const row = isThought(e) ? this.thoughtRow(e)
        : e.k === "action.taken" ? this.actionRow(e) : this.eventRow(e);
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
        if (e.k === "thought.annotated") this.markAnnotated(e);
        if (e.k === "thought.redacted") this.markRedacted(e);
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
      const repeat = e.rp !== undefined;
      row.className = "thought" + (revision ? " rev" : "") + (repeat ? " loop" : "") +
        (e.nx ? "" : " done");
      row.tlv = e.v;
      let head = "#" + e.n;
      if (revision) head += " ↺ revises" + (e.rv !== undefined ? " #" + e.rv : "") + ":";
      // A loop: the server found it (projections/loops.py); the page only draws the mark.
      if (repeat) head += " ⟳ repeats #" + e.rpn + " (v" + e.rp + "):";
      if (e.gen) head += " [" + e.m + "]";
      if (e.cap) head += " [captured " + e.cap + "]";
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

    // An action the agent took (a captured tool call), in line under the thought it followed
    // (the row before it: the capture appends each call after its reasoning), as the timeline
    // names it. Its name and arguments are the sender's text, set as text, never as markup;
    // long arguments are cut here and shown whole on hover.
    actionRow(e) {
      const args = e.args || "";
      const shown = args.length > ACTION_ARGS_SHOWN ? args.slice(0, ACTION_ARGS_SHOWN) + "…" : args;
      const after = e.n !== undefined && e.n !== null ? " after #" + e.n : "";
      const row = el("li", "event action", "↳ called " + e.act + "(" + shown + ")" + after +
        " · v" + e.v + " · " + shortTime(e.at));
      if (shown !== args) row.title = args;
      row.tlv = e.v;
      return row;
    }

    eventRow(e) {
      const words = {
        "session.started": "session started",
        "session.cleared": "session cleared: " + (e.why || ""),
        "session.expired": "session " + (e.why || "expired"),
        "thought.redacted": "thought #" + e.n + " (v" + e.rdv + ") redacted: " + (e.why || ""),
        "thought.annotated": "✎ thought #" + e.n + " annotated " + annotation(e),
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

    // A reviewer's annotation: a mark on the latest main-line thought with its number, shown
    // from the annotation's version on (its text set as text, never as markup).
    markAnnotated(e) {
      const targets = (this.mainByNumber.get(e.n) || []).filter((r) => r.tlv < e.v);
      if (!targets.length) return;
      const mark = el("span", "annotated", "✎ " + e.lb);
      mark.title = annotation(e);
      mark.dataset.label = e.lb;
      // The annotation in words under its thought, as show prints it (not only on hover).
      const note = el("div", "annotation-note", "✎ " + annotation(e));
      note.dataset.label = e.lb;
      note.tlAnnotation = e.v;
      const target = targets[targets.length - 1];
      target.append(mark, note);
      this.items.push({ v: e.v, node: mark }, { v: e.v, node: note });
      const known = Array.from(this.labelFilter.options).some((o) => o.value === e.lb);
      if (!known) {
        const option = el("option", null, "✎ " + e.lb);
        option.value = e.lb;
        this.labelFilter.append(option);
        this.labelFilter.classList.remove("hidden");
      }
      if (this.labelFilter.value) this.filterByLabel(this.labelFilter.value);
    }

    // A redaction, as it arrives: the thought it names reads [redacted] from now on (its text
    // is gone from the ledger, so no version shows it again).
    markRedacted(e) {
      const row = this.rows.get(e.rdv);
      if (row && row.classList.contains("thought")) {
        const text = row.querySelector(".thought-text");
        text.textContent = "[redacted]";
        text.classList.add("redacted");
      } else if (row) {
        for (const note of this.tree.querySelectorAll(".annotation-note")) {
          if (note.tlAnnotation === e.rdv) note.textContent = note.textContent.replace(/: [\s\S]*$/, ": [redacted]");
        }
      }
    }

    // Show only the thoughts annotated with ``label`` (every thought for ""): other thoughts,
    // the event rows and branches left empty go; the rows stay in the page, hidden by a class
    // of their own, so the version slider keeps working beneath the filter.
    filterByLabel(label) {
      this.tree.classList.toggle("filtering", label !== "");
      this.orphans.classList.toggle("filtering", label !== "");
      for (const row of this.rows.values()) {
        if (!row.classList.contains("thought")) continue;
        const marked = Array.from(row.querySelectorAll("span.annotated"))
          .some((mark) => mark.dataset.label === label);
        row.classList.toggle("filtered-out", label !== "" && !marked);
      }
      for (const { group, list } of this.branchGroups.values()) {
        const kept = list.querySelector("li.thought:not(.filtered-out)");
        group.classList.toggle("filtered-out", label !== "" && !kept);
      }
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
  }

  parts.Tree = Tree;
})(window);
