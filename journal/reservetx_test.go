package journal_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// An entry a merchant reserved in its own transaction without a
// fingerprint still names its method and path: a call of another
// operation with that reference is a conflict, nothing sent, instead of
// running the other operation under the reserved key.
func TestReserveTxEntryWithoutFingerprintRefusesAnotherOperation(t *testing.T) {
	srv := a55test.New(t)
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
	require.NoError(t, err)
	defer j.Close()
	c := a55Client(t, srv, j)
	tx, err := j.DB().BeginTx(t.Context(), nil)
	require.NoError(t, err)
	_, _, err = j.ReserveTx(t.Context(), tx, payonce.JournalEntry{Scope: c.Core().Scope(), Reference: "o-9/step",
		Operation: "wallets.create", Method: "POST", Path: a55.PathWallets, Key: "reserved-key-o9-0001", KeyCreated: srv.Clock().Now()})
	require.NoError(t, err)
	require.NoError(t, tx.Commit())

	_, err = c.Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("o-9/step"))
	require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
	assert.Empty(t, srv.Requests(), "nothing sent")
}

// An entry reserved in the merchant's transaction without a key creation
// time could never run (the key-age guard would call it unknown on the
// first Do): ReserveTx refuses it, typed, and records nothing.
func TestReserveTxRefusesAnEntryWithoutKeyCreationTime(t *testing.T) {
	j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
	require.NoError(t, err)
	defer j.Close()
	tx, err := j.DB().BeginTx(t.Context(), nil)
	require.NoError(t, err)
	_, _, err = j.ReserveTx(t.Context(), tx, payonce.JournalEntry{Scope: "a55:x", Reference: "o-10/charge",
		Method: "POST", Path: a55.PathCharges, Key: "reserved-key-o10-0001"})
	require.ErrorIs(t, err, journal.ErrInvalidEntry)
	require.NoError(t, tx.Commit())
	_, err = j.Get(t.Context(), "a55:x", "o-10/charge")
	require.ErrorIs(t, err, journal.ErrNotFound)
}

// The merchant reserves the charge in its own transaction, with the order
// row; a later Do with the reference uses the reserved key.
func TestReserveTxThenDoUsesTheReservedKey(t *testing.T) {
	srv := a55test.New(t)
	scope := "a55:" + srv.ClientID() + "@" + srv.URL
	entry := func(ref string) payonce.JournalEntry {
		return payonce.JournalEntry{Scope: scope, Reference: ref, Operation: "charges.create", Method: "POST", Path: a55.PathCharges,
			Key: "reserved-key-" + ref, KeyCreated: srv.Clock().Now()}
	}
	check := func(t *testing.T, j journal.Store, ref string) {
		ch, err := a55Client(t, srv, j).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference(ref))
		require.NoError(t, err)
		assert.Equal(t, "reserved-key-"+ref, ch.Meta.Key.String())
		assert.True(t, srv.Ledger().ExecutedOnce("reserved-key-"+ref))
	}
	t.Run("sqlite", func(t *testing.T) {
		j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
		require.NoError(t, err)
		defer j.Close()
		_, err = j.DB().ExecContext(t.Context(), "CREATE TABLE orders (id TEXT PRIMARY KEY)")
		require.NoError(t, err)
		tx, err := j.DB().BeginTx(t.Context(), nil)
		require.NoError(t, err)
		_, err = tx.ExecContext(t.Context(), "INSERT INTO orders (id) VALUES ('o-77')")
		require.NoError(t, err)
		_, created, err := j.ReserveTx(t.Context(), tx, entry("o-77/charge"))
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, tx.Commit())
		check(t, j, "o-77/charge")
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL part")
		}
		schema := fmt.Sprintf("payonce_e2e_tx_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		defer j.Close()
		defer func() {
			_, _ = j.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		orders := pgx.Identifier{schema, "orders"}.Sanitize()
		_, err = j.Pool().Exec(t.Context(), "CREATE TABLE "+orders+" (id text PRIMARY KEY)")
		require.NoError(t, err)
		tx, err := j.Pool().Begin(t.Context())
		require.NoError(t, err)
		_, err = tx.Exec(t.Context(), "INSERT INTO "+orders+" (id) VALUES ('o-78')")
		require.NoError(t, err)
		_, created, err := j.ReserveTx(t.Context(), tx, entry("o-78/charge"))
		require.NoError(t, err)
		require.True(t, created)
		require.NoError(t, tx.Commit(t.Context()))
		check(t, j, "o-78/charge")
	})
}

// An entry reserved inside the merchant's transaction without a
// fingerprint (as the docs' example does) is bound to the body its first
// run sends: the same reference asked again for another amount is
// ErrIdempotencyConflict, nothing sent, instead of the first charge
// answered from the journal.
func TestReserveTxWithoutFingerprintBindsTheFirstBody(t *testing.T) {
	srv := a55test.New(t)
	scope := "a55:" + srv.ClientID() + "@" + srv.URL
	charge := func(amount string) *a55.ChargeCreateRequest {
		r := chargeRequest("4111111111111111")
		r.InstallmentValue = payoncetest.Amount(amount)
		return r
	}
	check := func(t *testing.T, j journal.Store, ref string) {
		c := a55Client(t, srv, j)
		first, err := c.Charges.Create(t.Context(), charge("10.00"), payonce.WithReference(ref))
		require.NoError(t, err)
		e, err := j.Get(t.Context(), scope, ref)
		require.NoError(t, err)
		assert.NotEmpty(t, e.Fingerprint, "the first run bound its body")

		before := len(srv.Requests())
		_, err = c.Charges.Create(t.Context(), charge("99.00"), payonce.WithReference(ref))
		require.ErrorIs(t, err, payonce.ErrIdempotencyConflict)
		assert.Equal(t, before, len(srv.Requests()), "nothing sent")
		again, err := c.Charges.Create(t.Context(), charge("10.00"), payonce.WithReference(ref))
		require.NoError(t, err)
		assert.True(t, again.Meta.FromJournal)
		assert.Equal(t, first.UUID, again.UUID)
		assert.True(t, srv.Ledger().ExecutedOnce(first.Meta.Key.String()))
	}
	entry := func(ref string) payonce.JournalEntry {
		return payonce.JournalEntry{Scope: scope, Reference: ref, Operation: "charges.create", Method: "POST", Path: a55.PathCharges,
			Key: "reserved-key-" + ref, KeyCreated: srv.Clock().Now()}
	}
	t.Run("sqlite", func(t *testing.T) {
		j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
		require.NoError(t, err)
		defer j.Close()
		tx, err := j.DB().BeginTx(t.Context(), nil)
		require.NoError(t, err)
		_, _, err = j.ReserveTx(t.Context(), tx, entry("o-80/charge"))
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		check(t, j, "o-80/charge")
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL part")
		}
		schema := fmt.Sprintf("payonce_e2e_bind_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		defer j.Close()
		defer func() {
			_, _ = j.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		tx, err := j.Pool().Begin(t.Context())
		require.NoError(t, err)
		_, _, err = j.ReserveTx(t.Context(), tx, entry("o-81/charge"))
		require.NoError(t, err)
		require.NoError(t, tx.Commit(t.Context()))
		check(t, j, "o-81/charge")
	})
}

// hostileNames hold what an operator's terminal would obey or reorder:
// ESC, BEL, a carriage return, a C1 control, a right-to-left override
// and another bidirectional control, a line separator.
var hostileNames = []string{"o-1\x1b[31m", "o-1\x07", "o-1\rfake", "o-1\u0085x", "o-1\u202etxt.exe", "o-1\u2066x", "o-1\u2028x"}

// ReserveTx, Reserve and the client apply one validation: a scope or a
// reference the client refuses is refused by every backend too, typed,
// and nothing is recorded.
func TestReserveTxRefusesNamesTheClientRefuses(t *testing.T) {
	srv := a55test.New(t)
	for _, bad := range hostileNames {
		_, err := a55Client(t, srv, journal.NewMemory()).Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference(bad))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, "%q", bad)
	}
	assert.Empty(t, srv.Requests(), "nothing sent")

	entry := func(scope, ref string) payonce.JournalEntry {
		return payonce.JournalEntry{Scope: scope, Reference: ref, Operation: "charges.create", Method: "POST", Path: a55.PathCharges,
			Key: "reserved-key-hostile-1", KeyCreated: time.Now(), Fingerprint: corekit.Fingerprint("POST", a55.PathCharges, []byte(`{}`))}
	}
	check := func(t *testing.T, j journal.Store, reserveTx func(e payonce.JournalEntry) error) {
		for _, bad := range hostileNames {
			for _, e := range []payonce.JournalEntry{entry("a55:x", bad), entry(bad, "o-2")} {
				require.ErrorIs(t, reserveTx(e), journal.ErrInvalidEntry, "%q", bad)
				_, _, err := j.Reserve(t.Context(), e)
				require.ErrorIs(t, err, journal.ErrInvalidEntry, "%q", bad)
				_, err = j.Get(t.Context(), e.Scope, e.Reference)
				require.ErrorIs(t, err, journal.ErrNotFound, "%q", bad)
			}
		}
	}
	t.Run("memory", func(t *testing.T) {
		j := journal.NewMemory()
		check(t, j, func(e payonce.JournalEntry) error { _, _, err := j.ReserveTx(t.Context(), e); return err })
	})
	t.Run("sqlite", func(t *testing.T) {
		j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
		require.NoError(t, err)
		defer j.Close()
		check(t, j, func(e payonce.JournalEntry) error {
			tx, err := j.DB().BeginTx(t.Context(), nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, tx.Commit()) }()
			_, _, err = j.ReserveTx(t.Context(), tx, e)
			return err
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL part")
		}
		schema := fmt.Sprintf("payonce_e2e_names_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		defer j.Close()
		defer func() {
			_, _ = j.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		check(t, j, func(e payonce.JournalEntry) error {
			tx, err := j.Pool().Begin(t.Context())
			require.NoError(t, err)
			defer func() { require.NoError(t, tx.Commit(t.Context())) }()
			_, _, err = j.ReserveTx(t.Context(), tx, e)
			return err
		})
	})
}

// eachReserveTx runs check on every backend's ReserveTx, each on a
// journal of its own, committing the merchant's transaction after it.
func eachReserveTx(t *testing.T, check func(t *testing.T, j journal.Store, reserveTx func(e payonce.JournalEntry) error)) {
	t.Run("memory", func(t *testing.T) {
		j := journal.NewMemory()
		check(t, j, func(e payonce.JournalEntry) error { _, _, err := j.ReserveTx(t.Context(), e); return err })
	})
	t.Run("sqlite", func(t *testing.T) {
		j, err := sqlitejournal.Open(t.Context(), filepath.Join(t.TempDir(), "shop.db"))
		require.NoError(t, err)
		defer j.Close()
		check(t, j, func(e payonce.JournalEntry) error {
			tx, err := j.DB().BeginTx(t.Context(), nil)
			require.NoError(t, err)
			defer func() { require.NoError(t, tx.Commit()) }()
			_, _, err = j.ReserveTx(t.Context(), tx, e)
			return err
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := os.Getenv("PAYONCE_POSTGRES_URL")
		if url == "" {
			t.Skip("PAYONCE_POSTGRES_URL is not set: skipping the PostgreSQL part")
		}
		schema := fmt.Sprintf("payonce_e2e_reservetx_%d", time.Now().UnixNano())
		j, err := pgjournal.Open(t.Context(), url, pgjournal.WithSchema(schema))
		require.NoError(t, err)
		defer j.Close()
		defer func() {
			_, _ = j.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		check(t, j, func(e payonce.JournalEntry) error {
			tx, err := j.Pool().Begin(t.Context())
			require.NoError(t, err)
			defer func() { require.NoError(t, tx.Commit(t.Context())) }()
			_, _, err = j.ReserveTx(t.Context(), tx, e)
			return err
		})
	})
}

// ReserveTx stores a fingerprint only in a form the client writes: keyed
// (Client.Fingerprint with a fingerprint key) or "sha256-redacted:"
// (without one), or none. A plain digest of the request (an earlier
// payonce's form, or one a merchant computed) is an unkeyed hash of a
// body that may hold a card number and CVV: refused, typed, in any
// letter case or encoding, and nothing recorded.
func TestReserveTxRefusesAPlainFingerprint(t *testing.T) {
	body := []byte(`{"card":{"number":"4111111111111111","cvv":"123"},"amount":"10.00"}`)
	plain := sha256.Sum256(append([]byte("POST\x00"+a55.PathCharges+"\x00"), body...))
	key := hmac.New(sha256.New, []byte("merchant fingerprint key"))
	key.Write(body)
	hexDigits := hex.EncodeToString(plain[:])
	entry := func(ref, fp string) payonce.JournalEntry {
		return payonce.JournalEntry{Scope: "a55:x", Reference: ref, Operation: "charges.create", Method: "POST", Path: a55.PathCharges,
			Key: "reserved-key-" + ref, KeyCreated: time.Now(), Fingerprint: fp}
	}
	eachReserveTx(t, func(t *testing.T, j journal.Store, reserveTx func(e payonce.JournalEntry) error) {
		for name, fp := range map[string]string{
			"plain hex":        hexDigits,
			"upper-case hex":   strings.ToUpper(hexDigits),
			"base64":           base64.StdEncoding.EncodeToString(plain[:]),
			"a prefix of ours": corekit.FingerprintKeyedPrefix + "not-a-digest",
			"prefix, upper":    corekit.FingerprintRedactedPrefix + strings.ToUpper(hexDigits),
			"prefix, short":    corekit.FingerprintKeyedPrefix + hexDigits[:32],
			"anything else":    "f",
		} {
			err := reserveTx(entry("o-"+strings.ReplaceAll(name, " ", "-"), fp))
			require.ErrorIs(t, err, journal.ErrInvalidEntry, name)
			assert.NotContains(t, err.Error(), hexDigits, "%s: the error names no digest", name)
			_, err = j.Get(t.Context(), "a55:x", "o-"+strings.ReplaceAll(name, " ", "-"))
			require.ErrorIs(t, err, journal.ErrNotFound, "%s: nothing recorded", name)
		}
		for name, fp := range map[string]string{
			"keyed":    corekit.FingerprintKeyedPrefix + hex.EncodeToString(key.Sum(nil)),
			"redacted": corekit.Fingerprint("POST", a55.PathCharges, body),
			"none":     "",
		} {
			require.NoError(t, reserveTx(entry("ok-"+name, fp)), name)
			got, err := j.Get(t.Context(), "a55:x", "ok-"+name)
			require.NoError(t, err)
			assert.Equal(t, fp, got.Fingerprint)
		}
	})
}
