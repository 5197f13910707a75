// The sign-in page: trades a token for a sign-in cookie, then shows the page asked for.
// The token travels once, in a POST body: never in the address, and it is not kept here.
"use strict";
(function () {
  const form = document.getElementById("signin");
  const input = document.getElementById("token");
  const problem = document.getElementById("signin-error");

  // Arriving from a link on another site, the browser holds back a SameSite=Strict cookie on
  // that first request: if this browser is in fact signed in, ask for the page again (once).
  fetch("/api/me", { headers: { Accept: "application/json" } }).then((answer) => {
    if (answer.ok && !sessionStorage.getItem("tl-reloaded")) {
      sessionStorage.setItem("tl-reloaded", "1");
      location.reload();
    }
  }).catch(() => {});

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const token = input.value.trim();
    input.value = "";
    if (!token) return;
    try {
      const answer = await fetch("/api/signin", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ token }),
        credentials: "same-origin",
      });
      if (answer.ok) {
        sessionStorage.removeItem("tl-reloaded");
        location.reload(); // the same address, now signed in
        return;
      }
      const body = await answer.json().catch(() => ({}));
      problem.textContent = body.error || answer.statusText;
    } catch (error) {
      problem.textContent = "could not reach the app: " + (error.message || String(error));
    }
    input.focus();
  });
  input.focus();
})();
