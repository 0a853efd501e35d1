#!/usr/bin/env python3
"""The A55 idempotency guide's Python example against fakepay, with the
standard library only (urllib): the guide's own charge body under one
Idempotency-Key; the first answer is lost (a fault the script asks
fakepay for), the guide's retry sends the same key and body again and
gets the charge; a second call gets the same charge; the same key with
another body is a 409, never retried. The ledger shows one execution.

    FAKEPAY_URL=http://127.0.0.1:8080 python3 cmd/fakepay/guide/guide.py
"""
import json
import os
import random
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

BASE = os.environ.get("FAKEPAY_URL", "http://127.0.0.1:8080")


class IdempotencyConflict(Exception):
    """The key was used with another body: a bug, never retried."""


def post(path, body, headers):
    req = urllib.request.Request(BASE + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def token():
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "demo-client",
                                   "client_secret": "demo-secret"}).encode()
    status, body = post("/oauth2/token", form, {"Content-Type": "application/x-www-form-urlencoded"})
    if status != 200:
        sys.exit(f"guide.py: no token ({status}): {body!r}")
    return json.loads(body)["access_token"]


def create_charge_idempotent(charge_data, key, access_token, max_retries=3, base_delay=0.05):
    """The guide's retry: the same key and body on a lost answer or a 5xx,
    with exponential backoff and jitter; a 409 or another 4xx is final; no
    sleep after the last attempt."""
    headers = {"Authorization": f"Bearer {access_token}", "Content-Type": "application/json",
               "Idempotency-Key": key}
    body = json.dumps(charge_data).encode()
    for attempt in range(max_retries + 1):
        try:
            status, answer = post("/api/v1/bank/wallet/charge/", body, headers)
            if status == 409:
                raise IdempotencyConflict(answer.decode())
            if status < 500:
                return status, json.loads(answer)
            print(f"attempt {attempt + 1}: {status}; retrying with the same key", file=sys.stderr)
        except (ConnectionError, urllib.error.URLError) as err:
            print(f"attempt {attempt + 1}: no answer ({err}); retrying with the same key", file=sys.stderr)
        if attempt < max_retries:
            time.sleep(base_delay * 2 ** attempt + random.uniform(0, base_delay))
    raise RuntimeError("no answer after every attempt")


def main():
    access_token = token()
    key = str(uuid.uuid4())  # once per operation, reused on every retry
    fault = {"fault": "drop_after_commit", "provider": "a55", "path": "/api/v1/bank/wallet/charge/",
             "idempotency_key": key, "count": 1}
    status, body = post("/_fakepay/faults", json.dumps(fault).encode(), {"Content-Type": "application/json"})
    if status != 201:
        sys.exit(f"guide.py: could not add the fault ({status}): {body!r}")

    charge_data = {
        "amount": "100.00",
        "currency": "BRL",
        "type_charge": "credit_card",
        "card": {"number": "4111111111111111", "holder_name": "TEST", "expiration_month": "12",
                 "expiration_year": "2030", "cvv": "123"},
        "payer": {"name": "张伟", "email": "zhangwei@example.com", "document": "12345678909", "document_type": "CPF"},
    }
    status, first = create_charge_idempotent(charge_data, key, access_token)
    if status != 200 or first.get("status") != "confirmed":
        sys.exit(f"guide.py: charge not confirmed ({status}): {first}")
    status, again = create_charge_idempotent(charge_data, key, access_token)
    if again.get("charge_uuid") != first["charge_uuid"]:
        sys.exit(f"guide.py: the same key answered another charge: {again}")
    try:
        create_charge_idempotent(dict(charge_data, amount="200.00"), key, access_token)
        sys.exit("guide.py: another body under the same key was accepted")
    except IdempotencyConflict:
        pass

    with urllib.request.urlopen(BASE + "/_fakepay/ledger?" + urllib.parse.urlencode({"idempotency_key": key})) as resp:
        ops = json.loads(resp.read())["operations"]
    executions = [op for op in ops if op["kind"] == "charge.create"]
    if len(executions) != 1:
        sys.exit(f"guide.py: the ledger holds {len(executions)} executions of the key, not 1: {ops}")
    print(f"ok: python charge {first['charge_uuid']} executed once under key {key}")


if __name__ == "__main__":
    main()
