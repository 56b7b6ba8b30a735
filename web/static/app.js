// askslack's answer page: live without reloading. The server sends
// "changed" over server-sent events when any ask changes; the page then
// re-reads its own view (which holds only what this person may see) and
// swaps it in, keeping whatever the person has started to fill in.
(function () {
  "use strict";
  var live = document.getElementById("live");
  // The console verifies the audit chain on each load: it is read on
  // demand, not on every change.
  if (!live || live.dataset.live === "console" || !window.EventSource) { return; }
  var dirty = false;
  live.addEventListener("input", function () { dirty = true; });
  live.addEventListener("change", function () { dirty = true; });
  var busy = false, again = false;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname + location.search, { credentials: "same-origin", headers: { "X-Live": "1" } })
      .then(function (resp) {
        if (resp.status === 401) { location.reload(); return null; }
        var active = resp.headers.get("X-Ask-Active");
        return resp.text().then(function (html) { return { html: html, active: active }; });
      })
      .then(function (got) {
        if (!got) { return; }
        var doc = new DOMParser().parseFromString(got.html, "text/html");
        var next = doc.getElementById("live");
        if (!next) { return; }
        var cur = document.getElementById("live");
        if (cur.dataset.live === "ask" && dirty && got.active === "true") {
          // The person is answering: only the status (votes, phase) moves.
          var st = doc.getElementById("status"), old = document.getElementById("status");
          if (st && old) { old.replaceWith(st); }
          return;
        }
        cur.replaceWith(next);
        live = next;
        dirty = false;
        live.addEventListener("input", function () { dirty = true; });
        live.addEventListener("change", function () { dirty = true; });
        document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  var es = new EventSource("/app/events");
  es.addEventListener("hello", function () { document.body.dataset.live = "on"; });
  es.addEventListener("changed", refresh);
})();
