// fakepay console: reads the admin API, renders with textContent only
// (nothing the server returns is ever parsed as HTML), and sends every
// control as a POST or DELETE carrying the page's CSRF token.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="fakepay-csrf"]').content;
  const $ = (id) => document.getElementById(id);
  const POLL_MS = 1000;

  // el builds an element; children are nodes or strings (text nodes).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
    return e;
  }

  async function api(method, path, body) {
    const opts = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
    if (method !== "GET") {
      opts.headers["X-Fakepay-Csrf"] = csrf;
      if (body !== undefined) {
        opts.headers["Content-Type"] = "application/json";
        opts.body = JSON.stringify(body);
      }
    }
    // location.origin, never the page's own URL: a URL holding the Basic
    // credentials the browser was given cannot be fetched.
    const resp = await fetch(location.origin + path, opts);
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!resp.ok) {
      const msg = data && data.error ? data.error.code + ": " + data.error.message : "HTTP " + resp.status;
      throw new Error(msg);
    }
    return data;
  }

  function say(text, bad) {
    const m = $("message");
    m.textContent = text;
    m.className = bad ? "bad" : "ok";
  }

  // act asks before it changes state, then calls the admin API.
  async function act(question, method, path, body, done) {
    if (!window.confirm(question)) { say("cancelled"); return; }
    try {
      const data = await api(method, path, body);
      if (done) done(data);
      await refresh(true);
    } catch (e) {
      say(e.message, true);
    }
  }

  const fmtTime = (s) => (s ? s.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : "");
  const statusText = (n) => (n ? String(n) : "no answer");

  // ---- state
  const state = { before: "", stack: [], version: null, next: "", view: "list", detailID: null };

  function filterQuery() {
    const q = new URLSearchParams();
    const add = (k, v) => { if (v) q.set(k, v); };
    add("provider", $("f-provider").value);
    add("key", $("f-key").value.trim());
    add("kind", $("f-kind").value);
    add("status", $("f-status").value.trim());
    if ($("f-anomalies").checked) q.set("anomalies", "1");
    add("before", state.before);
    q.set("limit", "50");
    return q;
  }

  async function loadList(force) {
    const q = filterQuery();
    if (!force && state.version !== null) q.set("if_version", String(state.version));
    const page = await api("GET", "/_fakepay/operations?" + q.toString());
    if (page.unchanged) return;
    state.version = page.version;
    state.next = page.next || "";
    const body = $("ops").tBodies[0];
    body.replaceChildren();
    for (const op of page.operations) {
      const execClass = op.executions === 1 ? "ok" : "bad";
      const tr = el("tr", { "data-id": String(op.id), class: "op" },
        el("td", {}, op.provider),
        el("td", {}, op.kind || ""),
        el("td", { class: "mono" }, op.route || ""),
        el("td", { class: "mono key" }, el("a", { href: "#/op/" + op.id }, op.idempotency_key)),
        el("td", {}, fmtTime(op.first_seen)),
        el("td", { class: "num attempts" }, op.attempts),
        el("td", { class: "num executions " + execClass }, op.executions),
        el("td", { class: "num replays" }, op.replays),
        el("td", { class: "num conflicts" + (op.conflicts ? " warn" : "") }, op.conflicts),
        el("td", { class: "num" }, op.faults),
        el("td", { class: "num status" }, statusText(op.status)));
      body.append(tr);
    }
    let text = page.operations.length + " shown of " + page.total + " keys";
    if (page.evicted) text += " (" + page.evicted + " older keys dropped by the cap)";
    if (page.partial) text += "; searched a part only: older → goes on";
    $("summary").textContent = text;
    $("newer").disabled = state.stack.length === 0;
    $("older").disabled = !state.next;
  }

  async function loadClock() {
    const c = await api("GET", "/_fakepay/clock");
    $("clock").textContent = fmtTime(c.now);
  }

  async function loadFaults() {
    const f = await api("GET", "/_fakepay/faults");
    const body = $("faults").tBodies[0];
    body.replaceChildren();
    f.rules.forEach((r, i) => {
      const rm = el("button", { type: "button", class: "danger" }, "remove");
      rm.addEventListener("click", () => act("Remove fault rule #" + (i + 1) + " (" + r.fault + ")?", "DELETE", "/_fakepay/faults?index=" + i, undefined, () => say("rule removed")));
      body.append(el("tr", {}, el("td", {}, i + 1), el("td", {}, r.fault), el("td", {}, r.provider || "any"),
        el("td", { class: "mono" }, r.path || "any"), el("td", { class: "mono" }, r.idempotency_key || "any"),
        el("td", {}, r.count || "no cap"), el("td", {}, r.seen), el("td", {}, r.fired), el("td", {}, rm)));
    });
    $("faults").hidden = f.rules.length === 0;
  }

  function yesNo(b) { return b ? "yes" : "no"; }

  async function loadDetail(id) {
    let d;
    try {
      d = await api("GET", "/_fakepay/operations/" + encodeURIComponent(id));
    } catch (e) {
      $("d-title").textContent = e.message;
      return;
    }
    const op = d.operation;
    $("d-title").textContent = (op.kind || "operation") + " · " + op.idempotency_key;
    const dl = $("d-summary");
    dl.replaceChildren();
    const pairs = [["provider", op.provider], ["credential", op.credential || ""], ["route", op.route || ""],
      ["first seen", fmtTime(op.first_seen)], ["last seen", fmtTime(op.last_seen)], ["attempts", op.attempts],
      ["executions", op.executions], ["replays", op.replays], ["conflicts", op.conflicts], ["final status", statusText(op.status)]];
    for (const [k, v] of pairs) {
      const dd = el("dd", { id: "s-" + k.replace(" ", "-") }, v);
      if (k === "executions") dd.className = op.executions === 1 ? "ok" : "bad";
      dl.append(el("dt", {}, k), dd);
    }
    const ab = $("d-attempts").tBodies[0];
    ab.replaceChildren();
    d.attempts.forEach((a, i) => {
      const sig = a.signature_valid === undefined ? "n/a" : (a.signature_valid ? "valid" : "invalid");
      ab.append(el("tr", { class: "attempt" }, el("td", {}, i + 1), el("td", {}, fmtTime(a.time)), el("td", {}, a.method),
        el("td", { class: "mono path" }, a.path), el("td", { class: "fault" + (a.fault || a.answer ? " warn" : "") }, a.fault || a.answer || "none"),
        el("td", { class: "status" }, statusText(a.status)), el("td", {}, a.replay_header ? "true" : ""),
        el("td", {}, yesNo(a.replayed)), el("td", {}, yesNo(a.conflict)), el("td", {}, sig), el("td", { class: "mono" }, a.request_id || "")));
    });
    $("d-attempts-note").textContent = d.attempts_not_shown ? d.attempts_not_shown + " attempts not shown (past the first 200, or gone from the request log)" : "";
    const lb = $("d-ledger").tBodies[0];
    lb.replaceChildren();
    for (const o of d.ledger) {
      lb.append(el("tr", {}, el("td", {}, o.seq), el("td", {}, o.kind), el("td", { class: "mono" }, o.id),
        el("td", {}, o.credential || ""), el("td", {}, o.amount || ""), el("td", {}, fmtTime(o.time))));
    }
    const wh = $("d-webhooks");
    wh.replaceChildren();
    for (const g of d.webhooks) {
      const box = el("div", { class: "hooks" });
      const head = el("p", {}, "resource ", el("span", { class: "mono" }, g.resource), " ");
      if (document.body.dataset.webhooks) {
        const b = el("button", { type: "button", class: "resend" }, "Resend webhook");
        b.addEventListener("click", () => act("Send a new webhook for " + g.resource + " now?", "POST", "/_fakepay/a55/webhooks/resend", { charge_uuid: g.resource }, () => say("webhook queued")));
        head.append(b);
      }
      box.append(head);
      if (document.body.dataset.webhooks) await loadLifecycle(box, g.resource);
      const t = el("table", { class: "deliveries" }, el("thead", {}, el("tr", {}, el("th", {}, "delivery"), el("th", {}, "event"),
        el("th", {}, "url"), el("th", {}, "state"), el("th", {}, "tries and answers"))));
      const tb = el("tbody");
      for (const dv of (g.deliveries || [])) {
        const tries = (dv.attempts || []).map((x) => fmtTime(x.at) + " → " + (x.status_code ? x.status_code : (x.error || "no answer"))).join("; ");
        tb.append(el("tr", {}, el("td", { class: "mono" }, dv.id), el("td", {}, dv.status), el("td", { class: "mono" }, dv.url),
          el("td", {}, dv.state + (dv.next_attempt ? " (next " + fmtTime(dv.next_attempt) + ")" : "")), el("td", {}, tries || "none yet")));
      }
      t.append(tb);
      box.append(t);
      wh.append(box);
    }
    if (d.webhooks.length === 0) wh.append(el("p", {}, "none"));
  }

  // loadLifecycle shows an A55 charge's status and, one click each, the
  // events A55's side can make happen to it now (a PIX paid, a 3DS
  // challenge passed, a chargeback opened...), each firing its webhook.
  async function loadLifecycle(box, id) {
    let st;
    try {
      st = await api("GET", "/_fakepay/a55/charges/" + encodeURIComponent(id));
    } catch (e) {
      return; // not a charge (a wallet), or gone
    }
    const p = el("p", { class: "lifecycle" }, "charge status ", el("strong", { class: "charge-status" }, st.status), " ");
    for (const ev of st.events) {
      const b = el("button", { type: "button", class: "event", "data-event": ev }, ev);
      b.addEventListener("click", () => trigger(id, ev));
      p.append(b, " ");
    }
    const c = st.charge || {};
    for (const [k, label] of [["url_3ds", "3DS challenge page"], ["charge_payment_url", "payer page"], ["boleto_url", "boleto page"]]) {
      if (c[k]) p.append(el("a", { href: c[k], class: "page-link" }, label), " ");
    }
    box.append(p);
  }

  // trigger makes an event happen in one click: a sandbox's change, no
  // confirm (the resend, clock and reset controls ask first).
  async function trigger(id, ev) {
    try {
      const st = await api("POST", "/_fakepay/a55/charges/" + encodeURIComponent(id) + "/events", { event: ev });
      say(ev + ": charge " + st.status);
      await refresh(true);
    } catch (e) {
      say(e.message, true);
    }
  }

  async function refresh(force) {
    try {
      await loadClock();
      await loadFaults();
      if (state.view === "list") await loadList(force);
      else await loadDetail(state.detailID);
      $("live").textContent = "live";
      $("live").className = "ok";
    } catch (e) {
      $("live").textContent = "disconnected: " + e.message;
      $("live").className = "bad";
    }
  }

  function route() {
    const m = location.hash.match(/^#\/op\/(\d+)$/);
    state.view = m ? "detail" : "list";
    state.detailID = m ? m[1] : null;
    $("list-view").hidden = state.view !== "list";
    $("detail-view").hidden = state.view !== "detail";
    state.version = null;
    refresh(true);
  }

  function resetPaging() { state.before = ""; state.stack = []; state.version = null; refresh(true); }

  function wire() {
    for (const id of ["f-provider", "f-kind", "f-anomalies"]) $(id).addEventListener("change", resetPaging);
    for (const id of ["f-key", "f-status"]) $(id).addEventListener("input", resetPaging);
    $("filters").addEventListener("submit", (ev) => { ev.preventDefault(); resetPaging(); });
    $("older").addEventListener("click", () => {
      if (!state.next) return;
      state.stack.push(state.before); state.before = state.next; state.version = null; refresh(true);
    });
    $("newer").addEventListener("click", () => {
      state.before = state.stack.pop() || ""; state.version = null; refresh(true);
    });
    $("clock-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const adv = $("clock-advance").value.trim();
      if (!adv) { say("advance: want a duration such as 25h", true); return; }
      act("Advance the fake clock by " + adv + "? Keys, tokens and nonces age with it.", "POST", "/_fakepay/clock", { advance: adv }, (c) => say("clock now " + fmtTime(c.now)));
    });
    $("clock-set-btn").addEventListener("click", () => {
      const at = $("clock-set").value.trim();
      if (!at) { say("set: want an RFC 3339 time", true); return; }
      act("Set the fake clock to " + at + "?", "POST", "/_fakepay/clock", { set: at }, (c) => say("clock now " + fmtTime(c.now)));
    });
    $("reset-btn").addEventListener("click", () => act("Reset the fake? This empties every stored key, the ledger, the request log, the faults and every balance.", "POST", "/_fakepay/reset", undefined, () => say("reset done")));
    $("fault-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const rule = { fault: $("fault-kind").value };
      const setIf = (k, v) => { if (v) rule[k] = v; };
      setIf("provider", $("fault-provider").value);
      setIf("path", $("fault-path").value.trim());
      setIf("idempotency_key", $("fault-key").value.trim());
      const count = parseInt($("fault-count").value, 10);
      if (count > 0) rule.count = count;
      if (rule.fault === "delay") rule.delay = $("fault-delay").value.trim() || "200ms";
      act("Add the fault rule " + JSON.stringify(rule) + "?", "POST", "/_fakepay/faults", rule, () => say("fault rule added"));
    });
    const rel = $("release-btn");
    if (rel) {
      rel.addEventListener("click", () => act("Release the held test? Its fake then shuts down.", "POST", "/_fakepay/release", undefined, () => say("released: the fake shuts down")));
    }
    const bal = $("balance-form");
    if (bal) {
      bal.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const key = $("balance-key").value.trim(), amount = $("balance-amount").value.trim();
        act("Set the balance of " + key + " to " + amount + "?", "POST", "/_fakepay/balance", { api_key: key, amount }, () => say("balance set"));
      });
    }
    window.addEventListener("hashchange", route);
    route();
    setInterval(() => refresh(false), POLL_MS);
  }

  wire();
})();
