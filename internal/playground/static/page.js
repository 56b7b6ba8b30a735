// askslack playground: shows what the fake Slack holds, as the server
// rendered it, and sends what a person does back to the server, which
// delivers it to the bot through the fake (signed, as Slack would).
(function () {
  "use strict";

  const params = new URLSearchParams(location.search);
  let person = params.get("person") || localStorage.getItem("askslack.person") || "";
  let pane = (location.hash || "#channel").slice(1);
  if (!["channel", "dm", "home"].includes(pane)) pane = "channel";
  let source = null;
  let version = 0;

  // ---- rendering -------------------------------------------------------

  // reconcile puts items ({k, h}) into container in order, keeping the
  // nodes whose HTML did not change (so typing and open menus survive).
  function reconcile(container, items) {
    const old = new Map();
    for (const el of Array.from(container.children)) {
      if (el.dataset && el.dataset.key) old.set(el.dataset.key, el);
    }
    let prev = container.querySelector(":scope > .empty");
    for (const it of items || []) {
      let el = old.get(it.k);
      if (el && el._h === it.h) {
        old.delete(it.k);
      } else {
        if (el) old.delete(it.k);
        const fresh = document.createElement("div");
        fresh.className = "item";
        fresh.dataset.key = it.k;
        fresh.innerHTML = it.h;
        fresh._h = it.h;
        if (el) el.replaceWith(fresh);
        el = fresh;
      }
      const after = prev ? prev.nextSibling : container.firstChild;
      if (after !== el) container.insertBefore(el, after);
      prev = el;
    }
    for (const el of old.values()) el.remove();
    const empty = container.querySelector(":scope > .empty");
    if (empty) empty.hidden = (items || []).length > 0;
  }

  function render(snap) {
    person = snap.person;
    document.body.dataset.person = person;
    document.getElementById("channel-name").textContent = snap.channel;
    renderPeople(snap.people);
    const info = document.getElementById("info");
    if (info.dataset.set !== "1") {
      info.innerHTML = "";
      for (const line of snap.info || []) {
        const pre = document.createElement("pre");
        pre.textContent = line;
        info.appendChild(pre);
      }
      info.dataset.set = "1";
    }
    const channelPane = document.getElementById("pane-channel");
    const atBottom = channelPane.scrollHeight - channelPane.scrollTop - channelPane.clientHeight < 40;
    for (const name of ["channel", "dm", "home"]) {
      reconcile(document.getElementById("pane-" + name), snap.panes[name]);
    }
    const modal = document.getElementById("pane-modal");
    reconcile(modal, snap.panes.modal);
    modal.hidden = !(snap.panes.modal && snap.panes.modal.length);
    for (const el of document.querySelectorAll("[data-count]")) {
      const n = (snap.panes[el.dataset.count] || []).length;
      el.textContent = n ? String(n) : "";
    }
    if (atBottom) channelPane.scrollTop = channelPane.scrollHeight;
    formatTimes(document);
    version++;
    document.body.dataset.version = String(version);
  }

  function renderPeople(people) {
    const box = document.getElementById("people");
    const key = JSON.stringify(people) + person;
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.innerHTML = "";
    for (const p of people || []) {
      const label = document.createElement("label");
      label.className = "person" + (p.id === person ? " current" : "") + (p.allowed ? " allowed" : " denied");
      label.dataset.person = p.name;
      const input = document.createElement("input");
      input.type = "radio";
      input.name = "person";
      input.value = p.id;
      input.checked = p.id === person;
      input.addEventListener("change", () => switchPerson(p.id));
      const name = document.createElement("span");
      name.className = "person-name";
      name.textContent = p.name;
      const status = document.createElement("span");
      status.className = "person-status";
      status.textContent = p.allowed ? "✓ may answer" : "✗ not on ASKSLACK_ALLOWED_USERS";
      label.append(input, name, status);
      box.appendChild(label);
    }
  }

  // ---- Slack dates in the viewer's time zone ----------------------------

  const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;

  function dayDiff(d) {
    const a = new Date(d.getFullYear(), d.getMonth(), d.getDate());
    const n = new Date();
    const b = new Date(n.getFullYear(), n.getMonth(), n.getDate());
    return Math.round((a - b) / 86400000);
  }

  function ordinal(n) {
    const s = ["th", "st", "nd", "rd"], v = n % 100;
    return n + (s[(v - 20) % 10] || s[v] || s[0]);
  }

  // slackDate formats Slack's <!date> tokens: {date_num}, {date},
  // {date_short}, {date_long}, their _pretty forms, {time}, {time_secs}, {ago}.
  function slackDate(ts, format) {
    const d = new Date(ts * 1000);
    const month = (o) => d.toLocaleString("en-US", { month: o });
    const pretty = (plain) => {
      const diff = dayDiff(d);
      if (diff === 0) return "Today";
      if (diff === -1) return "Yesterday";
      if (diff === 1) return "Tomorrow";
      return plain;
    };
    const dateNum = d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0");
    const date = month("long") + " " + ordinal(d.getDate()) + ", " + d.getFullYear();
    const dateShort = month("short") + " " + d.getDate() + ", " + d.getFullYear();
    const dateLong = d.toLocaleString("en-US", { weekday: "long" }) + ", " + date;
    const time = d.toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
    const timeSecs = d.toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit", second: "2-digit" });
    const secs = Math.round((Date.now() - d) / 1000);
    const ago = Math.abs(secs) < 60 ? "just now" : Math.abs(secs) < 3600 ? Math.round(Math.abs(secs) / 60) + " minutes " + (secs > 0 ? "ago" : "from now") : Math.round(Math.abs(secs) / 3600) + " hours " + (secs > 0 ? "ago" : "from now");
    const tokens = {
      "{date_num}": dateNum, "{date}": date, "{date_short}": dateShort, "{date_long}": dateLong,
      "{date_pretty}": pretty(date), "{date_short_pretty}": pretty(dateShort), "{date_long_pretty}": pretty(dateLong),
      "{time}": time, "{time_secs}": timeSecs, "{ago}": ago,
    };
    return format.replace(/\{[a-z_]+\}/g, (t) => (t in tokens ? tokens[t] : t));
  }

  function formatTimes(root) {
    for (const el of root.querySelectorAll("time.m-date")) {
      const ts = Number(el.dataset.ts);
      if (!el.dataset.fallback) el.dataset.fallback = el.textContent;
      el.textContent = slackDate(ts, el.dataset.format || "");
      el.title = el.dataset.fallback + " · shown in " + tz;
    }
    for (const el of root.querySelectorAll("time.msg-time")) {
      const d = new Date(Number(el.dataset.ts) * 1000);
      el.textContent = d.toLocaleTimeString("en-US", { hour: "numeric", minute: "2-digit" });
      el.title = d.toString();
    }
  }

  // ---- acting ------------------------------------------------------------

  // errors keeps what could not be delivered, for whoever debugs the page.
  window.playgroundErrors = [];

  function toast(text, bad) {
    if (bad) window.playgroundErrors.push(text);
    const box = document.getElementById("toasts");
    const t = document.createElement("div");
    t.className = "toast" + (bad ? " bad" : "");
    t.textContent = text;
    box.appendChild(t);
    setTimeout(() => t.remove(), bad ? 8000 : 3000);
  }

  window.playgroundActs = [];

  async function act(body) {
    body.person = person;
    window.playgroundActs.push(body.act + " " + (body.surface || "") + " " + (body.blockId || "") + " " + JSON.stringify(body.values || []));
    let res;
    try {
      res = await fetch("/playground/act", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
    } catch (e) {
      toast("Could not reach the playground: " + e, true);
      return;
    }
    if (!res.ok) {
      let msg = res.statusText;
      try { msg = (await res.json()).error || msg; } catch (e) { /* not JSON */ }
      toast("Not delivered: " + msg, true);
    }
  }

  // where returns what identifies the surface a control is on.
  function where(el) {
    const modal = el.closest(".modal");
    if (modal) return { surface: "modal", viewId: modal.dataset.viewId };
    if (el.closest(".home")) return { surface: "home" };
    const msg = el.closest(".msg[data-surface=message]");
    if (msg) return { surface: "message", channel: msg.dataset.channel, ts: msg.dataset.ts };
    return null;
  }

  function chosen(group) {
    if (group.tagName === "SELECT") {
      return Array.from(group.selectedOptions).map((o) => o.value).filter((v) => v !== "");
    }
    return Array.from(group.querySelectorAll("input:checked")).map((i) => i.value);
  }

  document.addEventListener("click", (ev) => {
    const nav = ev.target.closest("a.nav[data-pane]");
    if (nav) {
      ev.preventDefault();
      showPane(nav.dataset.pane);
      return;
    }
    const btn = ev.target.closest("button[data-act]");
    if (!btn) return;
    const w = where(btn);
    if (!w) return;
    ev.preventDefault();
    if (btn.dataset.act === "close") {
      act({ act: "close", surface: "modal", viewId: w.viewId });
      return;
    }
    if (btn.dataset.act === "submit") {
      submitModal(btn.closest(".modal"));
      return;
    }
    act(Object.assign({ act: "button", blockId: btn.dataset.blockId, actionId: btn.dataset.actionId }, w));
  });

  document.addEventListener("change", (ev) => {
    const group = ev.target.closest("[data-act]");
    if (!group || group.dataset.act === "text" || group.dataset.act === "button") return;
    const w = where(group);
    // Controls in a modal's input blocks send nothing until Submit, as in Slack.
    if (!w || w.surface === "modal") return;
    act(Object.assign({ act: group.dataset.act, blockId: group.dataset.blockId, actionId: group.dataset.actionId, values: chosen(group) }, w));
  });

  document.addEventListener("submit", (ev) => {
    if (ev.target.id === "composer") {
      ev.preventDefault();
      const input = document.getElementById("command");
      const text = input.value.trim();
      if (!text) return;
      input.value = "";
      act({ act: "command", text: text.replace(/^\/askslack\s*/, "") });
      return;
    }
    const modal = ev.target.closest(".modal");
    if (modal) {
      ev.preventDefault();
      submitModal(modal);
    }
  });

  function submitModal(modal) {
    const inputs = {};
    for (const block of modal.querySelectorAll(".b-input[data-block-id]")) {
      const el = block.querySelector("[data-act]");
      if (!el) continue;
      if (el.dataset.act === "text") {
        inputs[block.dataset.blockId] = el.value === "" ? [] : [el.value];
      } else {
        inputs[block.dataset.blockId] = chosen(el);
      }
    }
    act({ act: "submit", surface: "modal", viewId: modal.dataset.viewId, inputs: inputs });
  }

  // ---- panes, people, the live stream ---------------------------------

  const titles = { channel: () => "# " + document.getElementById("channel-name").textContent, dm: () => "askslack (direct message)", home: () => "askslack · Home" };

  function showPane(name) {
    pane = name;
    history.replaceState(null, "", location.pathname + location.search + "#" + name);
    for (const el of document.querySelectorAll("section.pane")) el.hidden = el.dataset.pane !== name;
    for (const el of document.querySelectorAll("a.nav")) el.classList.toggle("active", el.dataset.pane === name);
    document.getElementById("pane-title").textContent = titles[name]();
    document.getElementById("composer").hidden = name === "home";
    document.body.dataset.pane = name;
    // Slack sends app_home_opened every time the tab is opened.
    if (name === "home" && person) act({ act: "home-open" });
  }

  function switchPerson(id) {
    person = id;
    localStorage.setItem("askslack.person", id);
    connect();
    if (pane === "home") act({ act: "home-open" });
  }

  function connect() {
    if (source) source.close();
    const live = document.getElementById("live");
    source = new EventSource("/playground/events?person=" + encodeURIComponent(person));
    source.addEventListener("state", (ev) => {
      live.classList.add("on");
      const snap = JSON.parse(ev.data);
      const first = !person;
      render(snap);
      if (first && pane === "home") act({ act: "home-open" });
    });
    source.onerror = () => live.classList.remove("on");
  }

  connect();
  showPane(pane);
})();
