// The A55 idempotency guide's Node.js example against fakepay, with
// Node's built-in fetch (Node 20): the guide's own charge body under one
// Idempotency-Key; the first answer is lost (a fault the script asks
// fakepay for), the guide's retry sends the same key and body again and
// gets the charge; a second call gets the same charge; the same key with
// another body is a 409, never retried. The ledger shows one execution.
//
//   FAKEPAY_URL=http://127.0.0.1:8080 node cmd/fakepay/guide/guide.mjs
import crypto from "node:crypto";

const BASE = process.env.FAKEPAY_URL || "http://127.0.0.1:8080";

// IdempotencyConflict is a 409: the key was used with another body, a bug
// never retried (told apart by its class, not by its message's words).
class IdempotencyConflict extends Error {}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fail(msg) {
  console.error("guide.mjs: " + msg);
  process.exit(1);
}

async function token() {
  const res = await fetch(BASE + "/oauth2/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: "demo-client", client_secret: "demo-secret" }),
  });
  if (res.status !== 200) fail("no token: " + res.status);
  return (await res.json()).access_token;
}

// createChargeIdempotent is the guide's retry: the same key and body on a
// lost answer or a 5xx, with exponential backoff and jitter; a 409 or
// another 4xx is final.
async function createChargeIdempotent(chargeData, key, accessToken, maxRetries = 3, baseDelay = 50) {
  const headers = { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json", "Idempotency-Key": key };
  const body = JSON.stringify(chargeData);
  for (let attempt = 0; attempt <= maxRetries; attempt++) {
    try {
      const res = await fetch(BASE + "/api/v1/bank/wallet/charge/", { method: "POST", headers, body });
      if (res.status === 409) throw new IdempotencyConflict(await res.text());
      if (res.status < 500) return { status: res.status, charge: await res.json() };
      console.error(`attempt ${attempt + 1}: ${res.status}; retrying with the same key`);
    } catch (err) {
      if (err instanceof IdempotencyConflict) throw err;
      console.error(`attempt ${attempt + 1}: no answer (${err.message}); retrying with the same key`);
    }
    if (attempt < maxRetries) await sleep(baseDelay * 2 ** attempt + Math.random() * baseDelay);
  }
  throw new Error("no answer after every attempt");
}

const accessToken = await token();
const key = crypto.randomUUID(); // once per operation, reused on every retry
const fault = await fetch(BASE + "/_fakepay/faults", {
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ fault: "drop_after_commit", provider: "a55", path: "/api/v1/bank/wallet/charge/", idempotency_key: key, count: 1 }),
});
if (fault.status !== 201) fail("could not add the fault: " + fault.status);

const chargeData = {
  amount: "100.00",
  currency: "BRL",
  type_charge: "credit_card",
  card: { number: "4111111111111111", holder_name: "TEST", expiration_month: "12", expiration_year: "2030", cvv: "123" },
  payer: { name: "张伟", email: "zhangwei@example.com", document: "12345678909", document_type: "CPF" },
};
const first = await createChargeIdempotent(chargeData, key, accessToken);
if (first.status !== 200 || first.charge.status !== "confirmed") fail("charge not confirmed: " + JSON.stringify(first));
const again = await createChargeIdempotent(chargeData, key, accessToken);
if (again.charge.charge_uuid !== first.charge.charge_uuid) fail("the same key answered another charge: " + JSON.stringify(again));
try {
  await createChargeIdempotent({ ...chargeData, amount: "200.00" }, key, accessToken);
  fail("another body under the same key was accepted");
} catch (err) {
  if (!(err instanceof IdempotencyConflict)) throw err;
}

const ledger = await (await fetch(BASE + "/_fakepay/ledger?" + new URLSearchParams({ idempotency_key: key }))).json();
const executions = ledger.operations.filter((op) => op.kind === "charge.create");
if (executions.length !== 1) fail(`the ledger holds ${executions.length} executions of the key, not 1`);
console.log(`ok: node charge ${first.charge.charge_uuid} executed once under key ${key}`);
