// The live socket (/ws, the path serve --http uses too): one subscription that reopens where it
// stopped. Reads only.
"use strict";
(function (global) {
  // Follow `sessions` (a list of ids, or "all") from position `after` ("now": from the log's
  // end). Each event goes to onEvent(message); a dropped socket reopens after the last
  // position seen, so nothing is missed or seen twice. Returns { close() }.
  function follow({ sessions, after, onEvent, onState }) {
    let socket = null;
    let closed = false;
    let last = after;
    let delay = 1000;
    const state = onState || (() => {});
    function open() {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      socket = new WebSocket(scheme + "//" + location.host + "/ws");
      socket.onopen = () => {
        socket.send(JSON.stringify({ op: "subscribe", id: "live", sessions, after: last }));
      };
      socket.onmessage = (message) => {
        const item = JSON.parse(message.data);
        if (item.type === "subscribed") {
          delay = 1000;
          if (typeof item.after === "number" && last === "now") last = item.after;
          state(true);
        } else if (item.type === "event") {
          last = item.position;
          onEvent(item);
        }
      };
      socket.onclose = (event) => {
        state(false);
        // 1008: signed out or the token revoked; the page shows the sign-in again.
        if (event.code === 1008) {
          closed = true;
          location.reload();
          return;
        }
        if (closed) return;
        setTimeout(() => { if (!closed) open(); }, delay);
        delay = Math.min(delay * 2, 30000);
      };
    }
    open();
    return {
      close() {
        closed = true;
        if (socket) socket.close(1000);
      },
    };
  }

  global.ThoughtLedgerLive = { follow };
})(window);
