// The session view's link to the app: new events from the live feed, and the chain check.
// Methods of SessionView (session.js).
"use strict";
(function (global) {
  const parts = global.ThoughtLedgerParts;
  const { plural } = parts;

  class Live {
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
      if (follow) this.showVersion(latest, false, true); else this.drawCounts();
      this.drawView(true);
    }

    get lastPosition() {
      const events = this.timeline.events;
      return events.length ? events[events.length - 1].p : 0;
    }
  }

  parts.Live = Live;
})(window);
