// What a person does from a session's page (the app only, never the HTML export): annotate the
// thought in the inspector, redact it, fork the session at the slider's version. Each act is a
// POST the server checks against the principal's role; its answer (or its refusal, in the
// server's words) is shown under the buttons, and the act's event comes back over the live feed
// like anyone else's, to this page and every other one open on the session.
"use strict";
(function (global) {
  const { el } = global.ThoughtLedger;

  async function postJson(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(answer.error || response.statusText);
    return answer;
  }

  function field(tag, id, label, type) {
    const input = el(tag);
    input.id = id;
    if (type) input.type = type;
    input.setAttribute("aria-label", label);
    input.placeholder = label;
    return input;
  }

  function button(id, text) {
    const b = el("button", null, text);
    b.type = "submit";
    b.id = id;
    return b;
  }

  // options.navigate(url): open the fork's page in the app.
  function attach(view, sessionId, options) {
    const base = "/api/sessions/" + encodeURIComponent(sessionId) + "/";
    const card = el("section", "acts card");
    card.id = "acts";
    const title = el("h2");
    const result = el("p", "muted");
    result.id = "act-result";
    result.setAttribute("role", "status");

    const annotate = el("form");
    annotate.id = "annotate-form";
    const label = field("input", "annotate-label", "label (e.g. wrong-premise)", "text");
    label.maxLength = 64;
    label.required = true;
    const score = field("input", "annotate-score", "score", "number");
    score.step = "any";
    const note = field("textarea", "annotate-note", "note (why, in words)");
    note.maxLength = 10000;
    score.className = "score";
    const line = el("div", "row");
    line.append(label, score, button("annotate", "Annotate"));
    note.rows = 1;
    annotate.append(line, note);

    const redact = el("form");
    redact.id = "redact-form";
    const reason = field("input", "redact-reason", "why redact (recorded)", "text");
    reason.maxLength = 1000;
    reason.required = true;
    const redactButton = button("redact", "Redact");
    const redactLine = el("div", "row");
    redactLine.append(reason, redactButton);
    redact.append(redactLine);

    const fork = el("form");
    fork.id = "fork-form";
    const forkButton = button("fork", "Fork");
    fork.append(forkButton);

    card.append(title, annotate, redact, fork, result);
    view.actsSlot.append(card);

    let target = null; // the thought event acted on: the inspected one
    function refresh(e, version) {
      target = e && e.n !== undefined && e.x !== undefined ? e : null;
      title.textContent = target ? "Thought #" + target.n + " (version " + target.v + ")"
        : "Pick a thought to annotate or redact it";
      for (const input of [label, score, note, reason, annotate.querySelector("button"), redactButton]) {
        input.disabled = target === null;
      }
      redactButton.textContent = target ? "Redact #" + target.n : "Redact";
      forkButton.textContent = "Fork at version " + version;
    }
    view.options.onInspect = refresh;
    refresh(view.inspected, view.version);

    function say(text, kind) {
      result.textContent = text;
      result.className = kind;
    }

    async function act(form, run) {
      const buttons = form.querySelectorAll("button");
      for (const b of buttons) b.disabled = true;
      say("…", "muted");
      try {
        await run();
      } catch (error) {
        say("Refused: " + error.message, "refused");
      } finally {
        for (const b of buttons) b.disabled = target === null && form !== fork;
      }
    }

    annotate.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!target) return;
      const body = { thought: target.n, label: label.value.trim() };
      if (score.value !== "") body.score = Number(score.value);
      if (note.value.trim()) body.note = note.value;
      act(annotate, async () => {
        const made = await postJson(base + "annotate", body);
        say("Annotated thought #" + made.thoughtNumber + " as " + made.label +
          " (version " + made.version + ")", "done");
        note.value = "";
      });
    });

    redact.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!target) return;
      const body = { version: target.v, reason: reason.value };
      act(redact, async () => {
        const made = await postJson(base + "redact", body);
        say("Redacted " + made.redacted.map((r) => "#" + r.thoughtNumber + " (v" + r.version + ")")
          .join(", ") + ": the chain still verifies", "done");
        reason.value = "";
      });
    });

    fork.addEventListener("submit", (event) => {
      event.preventDefault();
      act(fork, async () => {
        const made = await postJson(base + "fork", { at: view.version });
        say("Forked at version " + made.forkVersion + ": " + made.sessionId, "done");
        options.navigate(made.href);
      });
    });
    return card;
  }

  global.ThoughtLedgerActs = { attach, postJson };
})(window);
