// fakepay A55 payer pages (3DS challenge, PIX, boleto): one click sends
// the event to the admin API with the page's CSRF token.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="fakepay-csrf"]').content;
  const charge = document.body.dataset.charge;
  const buttons = Array.from(document.querySelectorAll("button[data-event]"));
  const result = document.getElementById("result");

  async function send(event) {
    for (const b of buttons) b.disabled = true;
    let data = null, resp;
    try {
      resp = await fetch(location.origin + "/_fakepay/a55/charges/" + encodeURIComponent(charge) + "/events", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-Fakepay-Csrf": csrf },
        body: JSON.stringify({ event }),
      });
      try { data = await resp.json(); } catch (e) { data = null; }
    } catch (e) {
      result.textContent = "not sent: " + e.message;
      result.className = "bad";
      for (const b of buttons) b.disabled = false;
      return;
    }
    if (!resp.ok) {
      result.textContent = data && data.error ? data.error.code + ": " + data.error.message : "HTTP " + resp.status;
      result.className = "bad";
      for (const b of buttons) b.disabled = false;
      return;
    }
    document.getElementById("status").textContent = data.status;
    result.textContent = "charge " + data.status;
    result.className = "ok";
    const back = document.getElementById("back");
    if (back) back.hidden = false;
  }

  for (const b of buttons) b.addEventListener("click", () => send(b.dataset.event));
})();
