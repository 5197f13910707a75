// The session view's tree: one row per event (thoughts, branches under the thought they fork
// from, other events), and which rows a version shows. Methods of SessionView (session.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { BRANCH_KINDS, el, isThought, shortTime } = parts;
  // Main-line rows go in chunks of this many: hiding a chunk is one change, and the browser
  // skips laying out chunks off screen (content-visibility), so a jump across 10,000
  // versions redraws a screenful, not the session.
  const CHUNK = 64;

  class Tree {
    clicked(event) {
      const row = event.target.closest("li.thought, li.event, li.branch");
      if (row && row.tlv !== undefined) this.showVersion(row.tlv);
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
  }

  parts.Tree = Tree;
})(window);
