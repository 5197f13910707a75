// The review queue (/review): a filter makes a queue of thoughts (/api/review); they come one at
// a time, and a key labels the one shown (an annotation, the same POST as a session page's
// Annotate) or skips it. Each reviewer's place in each queue is kept in this browser
// (localStorage, under the reviewer's name and the queue's filter), so a queue picks up where
// it was left; the labels themselves are in the ledger, where "not labelled yet" reads them.
"use strict";
(function (global) {
  const { el, plural } = global.ThoughtLedger;
  const { postJson } = global.ThoughtLedgerActs;
  const PRESETS = [["1", "good"], ["2", "wrong-premise"], ["3", "loop"], ["4", "unclear"]];
  let onKey = null;

  function leave() {
    if (onKey) document.removeEventListener("keydown", onKey);
    onKey = null;
  }

  function form(query) {
    const box = el("form", "filters");
    box.id = "review-filter";
    const fields = {};
    for (const [name, label, type] of [["q", "words", "search"], ["agent", "agent", "text"]]) {
      const wrap = el("label", null, label);
      const input = el("input");
      input.type = type;
      input.name = name;
      input.value = query.get(name) || "";
      wrap.append(input);
      box.append(wrap);
      fields[name] = input;
    }
    for (const [name, label] of [["loops", "repeats an earlier thought"], ["unlabelled", "no label yet"]]) {
      const wrap = el("label", "check");
      const input = el("input");
      input.type = "checkbox";
      input.name = name;
      input.checked = query.get(name) === "1";
      wrap.append(input, " " + label);
      box.append(wrap);
      fields[name] = input;
    }
    const start = el("button", null, "Start the queue");
    start.type = "submit";
    box.append(start);
    return { box, fields };
  }

  async function page(main, app) {
    leave();
    document.title = "Review · thoughtledger";
    const query = new URLSearchParams(location.search);
    const { box, fields } = form(query);
    box.addEventListener("submit", (event) => {
      event.preventDefault();
      const next = new URLSearchParams();
      for (const name of ["q", "agent"]) if (fields[name].value.trim()) next.set(name, fields[name].value.trim());
      for (const name of ["loops", "unlabelled"]) if (fields[name].checked) next.set(name, "1");
      app.navigate("/review" + (next.toString() ? "?" + next : ""));
    });
    main.textContent = "";
    main.append(el("h1", null, "Review"), box);
    if (![...query.values()].some((value) => value.trim())) {
      main.append(el("p", "muted", "Choose the thoughts to review: words, an agent, the thoughts that " +
        "repeat an earlier one, those nobody has labelled yet. They then come one at a time."));
      return;
    }
    const result = el("p", "muted");
    result.id = "review-result";
    let queue;
    try {
      queue = await app.getJson("/api/review?" + query);
    } catch (error) {
      result.textContent = error.message;
      result.className = "error";
      main.append(result);
      return;
    }
    if (!app.isShown()) return;
    const me = await app.signedIn;
    const reviewer = me && me.name ? me.name : "you";
    const key = "tl-review:" + reviewer + ":" + query.toString();
    const kept = JSON.parse(localStorage.getItem(key) || "{}");
    const done = kept.done || {};
    const itemKey = (item) => item.sessionId + "@" + item.version;
    const progress = el("p", "counts");
    progress.id = "review-progress";
    const card = el("section", "card review-item");
    card.id = "review-item";
    const keys = el("p", "muted keys");
    keys.textContent = "Keys: " + PRESETS.map(([k, label]) => k + " " + label).join(" · ") +
      " · Enter the label typed · s skip · b back";
    main.append(progress, card, keys, result);
    if (!queue.items.length) {
      card.append(el("p", "muted", "No thought in this queue."));
      return;
    }
    let at = queue.items.findIndex((item) => !(itemKey(item) in done));
    if (at < 0) at = queue.items.length;

    function save() {
      localStorage.setItem(key, JSON.stringify({ done }));
    }

    function draw() {
      const labelled = Object.values(done).filter((d) => d !== "skip").length;
      const skipped = Object.values(done).filter((d) => d === "skip").length;
      const total = queue.items.length + (queue.more ? "+" : "");
      progress.textContent = (at < queue.items.length ? "Thought " + (at + 1) + " of " + total : "Queue done: " + total + " thoughts") +
        " · " + labelled + " labelled · " + skipped + " skipped (" + reviewer + ")";
      card.textContent = "";
      if (at >= queue.items.length) {
        card.append(el("p", null, "Every thought of this queue is labelled or skipped."));
        return;
      }
      const item = queue.items[at];
      const where = el("p", "muted");
      const link = el("a", "mono", item.sessionId.slice(0, 18) + "… #" + item.thoughtNumber);
      link.href = item.href;
      where.append(link, " · version " + item.version + (item.agent ? " · " + item.agent : ""));
      const text = el("p", "review-text", item.text);
      const labels = el("p", "muted", item.labels.length ? "labelled before: " + item.labels.join(", ") : "no label yet");
      const buttons = el("div", "row review-buttons");
      for (const [k, label] of PRESETS) {
        const b = el("button", null, k + " " + label);
        b.type = "button";
        b.addEventListener("click", () => labelWith(label));
        buttons.append(b);
      }
      const custom = el("input");
      custom.id = "review-label";
      custom.placeholder = "another label, then Enter";
      custom.setAttribute("aria-label", "label");
      custom.maxLength = 64;
      custom.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && custom.value.trim()) {
          event.preventDefault();
          labelWith(custom.value.trim());
        }
      });
      const skip = el("button", null, "s skip");
      skip.type = "button";
      skip.addEventListener("click", () => move("skip"));
      buttons.append(custom, skip);
      card.append(where, text, labels, buttons);
    }

    function move(outcome) {
      if (at >= queue.items.length) return;
      done[itemKey(queue.items[at])] = outcome;
      save();
      at += 1;
      draw();
    }

    let busy = false;
    async function labelWith(label) {
      if (busy || at >= queue.items.length) return;
      busy = true;
      const item = queue.items[at];
      try {
        await postJson("/api/sessions/" + encodeURIComponent(item.sessionId) + "/annotate",
          { thought: item.thoughtNumber, label });
        result.textContent = "Labelled #" + item.thoughtNumber + " " + label;
        result.className = "done";
        move(label);
      } catch (error) {
        result.textContent = "Refused: " + error.message;
        result.className = "refused";
      } finally {
        busy = false;
      }
    }

    onKey = (event) => {
      const target = event.target;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const preset = PRESETS.find(([k]) => k === event.key);
      if (preset) labelWith(preset[1]);
      else if (event.key === "s") move("skip");
      else if (event.key === "b" && at > 0) {
        at -= 1;
        delete done[itemKey(queue.items[at])];
        save();
        draw();
      } else return;
      event.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    draw();
  }

  global.ThoughtLedgerReview = { page, leave };
})(window);
