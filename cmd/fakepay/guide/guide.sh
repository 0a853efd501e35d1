#!/usr/bin/env bash
# The A55 idempotency guide's cURL example against fakepay: the guide's
# own charge body, sent under one Idempotency-Key; the first answer is
# lost (a fault the script asks fakepay for), the retry with the same key
# and body gets the charge, a third send the same charge, the same key
# with another body 409. The ledger shows one execution.
#
#   FAKEPAY_URL=http://127.0.0.1:8080 cmd/fakepay/guide/guide.sh
set -euo pipefail
base="${FAKEPAY_URL:-http://127.0.0.1:8080}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "guide.sh: $*" >&2; exit 1; }
field() { # field NAME FILE: a top-level string member of a JSON answer
  sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p' "$2" | head -n 1
}

curl -sf -X POST "$base/oauth2/token" -d grant_type=client_credentials \
  -d client_id=demo-client -d client_secret=demo-secret -o "$work/token" || fail "no token"
A55_ACCESS_TOKEN=$(field access_token "$work/token")
[ -n "$A55_ACCESS_TOKEN" ] || fail "no access_token in $(cat "$work/token")"

# Generate the operation's key once.
IDEMPOTENCY_KEY=$(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen)

# The first attempt commits and loses its answer.
curl -sf -X POST "$base/_fakepay/faults" -H "Content-Type: application/json" \
  -d '{"fault":"drop_after_commit","provider":"a55","path":"/api/v1/bank/wallet/charge/","idempotency_key":"'"$IDEMPOTENCY_KEY"'","count":1}' \
  -o /dev/null || fail "could not add the fault"

body='{
"amount": "100.00",
"currency": "BRL",
"type_charge": "credit_card",
"card": { "number": "4111111111111111", "holder_name": "TEST", "expiration_month": "12", "expiration_year": "2030", "cvv": "123" },
"payer": { "name": "张伟", "email": "zhangwei@example.com", "document": "12345678909", "document_type": "CPF" }
}'

# send BODY OUT: one attempt; prints the HTTP status, 000 when no answer came.
send() {
  curl -s -X POST "$base/api/v1/bank/wallet/charge/" \
    -H "Authorization: Bearer ${A55_ACCESS_TOKEN}" \
    -H "Content-Type: application/json" \
    -H "Idempotency-Key: ${IDEMPOTENCY_KEY}" \
    -d "$1" -o "$2" -w '%{http_code}' || true
}

# The guide's retry: the same key and body on a lost answer or a 5xx,
# backing off; a 409 or another 4xx is final.
charge() {
  local attempt status delay=0.05
  for attempt in 1 2 3 4; do
    status=$(send "$body" "$work/charge")
    case "$status" in
      2??) return 0 ;;
      409) fail "idempotency conflict: $(cat "$work/charge")" ;;
      4??) fail "refused ($status): $(cat "$work/charge")" ;;
    esac
    echo "attempt $attempt: ${status/000/no answer}; retrying with the same key" >&2
    [ "$attempt" = 4 ] && break
    sleep "$delay"
    delay=$(awk "BEGIN{print $delay*2}")
  done
  fail "no answer after 4 attempts"
}

charge
first=$(field charge_uuid "$work/charge")
[ -n "$first" ] || fail "no charge_uuid in $(cat "$work/charge")"
[ "$(field status "$work/charge")" = confirmed ] || fail "not confirmed: $(cat "$work/charge")"

# Retry with the same key: the same answer, no second charge.
charge
again=$(field charge_uuid "$work/charge")
[ "$again" = "$first" ] || fail "the same key answered another charge: $again, not $first"

# The same key with another body: 409, never retried.
status=$(send "${body/100.00/200.00}" "$work/conflict")
[ "$status" = 409 ] || fail "another body under the same key answered $status, not 409"

curl -sf "$base/_fakepay/ledger?idempotency_key=$IDEMPOTENCY_KEY" -o "$work/ledger" || fail "no ledger"
n=$(grep -o '"kind":"charge.create"' "$work/ledger" | wc -l)
[ "$n" -eq 1 ] || fail "the ledger holds $n executions of the key, not 1: $(cat "$work/ledger")"
echo "ok: curl charge $first executed once under key $IDEMPOTENCY_KEY"
