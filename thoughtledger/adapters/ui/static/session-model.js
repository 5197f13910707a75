// The session view's model: what a session is at each version, and the small helpers every
// part of the view shares. Every text from the ledger enters the page through textContent,
// never as markup. Loaded first; session.js puts the parts together.
"use strict";
(function (global) {
  const parts = (global.ThoughtLedgerParts = global.ThoughtLedgerParts || {});
  const BRANCH_KINDS = new Set(["branch.opened", "branch.extended"]);
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

  function readState(text) {
    const params = new URLSearchParams(text);
    const version = Number(params.get("v"));
    const compare = params.get("compare");
    return {
      version: Number.isInteger(version) && version > 0 ? version : null,
      compare: compare !== null && compare !== "" && Number.isInteger(Number(compare)) ? Number(compare) : null,
    };
  }

  Object.assign(parts, {
    BRANCH_KINDS, Timeline, el, isThought, plural, readState, shortTime,
  });
})(window);
