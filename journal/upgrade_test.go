package journal_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	gt "github.com/payonce/payonce/internal/testsupport/goldentest"
)

// chargeUUIDOf is the charge_uuid of a recorded A55 answer.
func chargeUUIDOf(t *testing.T, result []byte) string {
	t.Helper()
	var ch struct {
		UUID string `json:"charge_uuid"`
	}
	require.NoError(t, json.Unmarshal(result, &ch))
	require.NotEmpty(t, ch.UUID)
	return ch.UUID
}

// cardIDOf is the card_id of a recorded Coinepay answer.
func cardIDOf(t *testing.T, result []byte) string {
	t.Helper()
	var env struct {
		Data struct {
			CardID string `json:"card_id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(result, &env))
	require.NotEmpty(t, env.Data.CardID)
	return env.Data.CardID
}

func oldScopes(g gt.Golden) bool { return g.OldScopes }

// A journal written before scopes named the origin, opened by today's
// client as it is: its references are not found under today's scope, so
// the client must refuse, naming the command that maps them, rather than
// charge each order again.
func TestGoldenJournalWithOldScopesIsRefusedNotChargedAgain(t *testing.T) {
	gt.ForEach(t, oldScopes, func(t *testing.T, w *gt.World) {
		ac, err := w.A55Client(t)
		require.NoError(t, err)
		_, err = ac.Charges.Create(t.Context(), gt.Order1, payonce.WithReference(gt.RefOrder1))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)
		assert.Contains(t, err.Error(), "payonce journal scopes")
		_, err = ac.Charges.Create(t.Context(), gt.Order2, payonce.WithReference(gt.RefOrder2))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)

		cc, err := w.CoinepayClient(t)
		require.NoError(t, err)
		_, err = cc.Cards.Apply(t.Context(), gt.Job1, payonce.WithReference(gt.RefJob1))
		require.ErrorIs(t, err, payonce.ErrInvalidConfig)
		w.NoSecondCharge(t, 0, 0)
	})
}

// The old scope given by hand (payonce.WithScope) finds the entries; their
// plain fingerprints must be recognised, not read as another payload.
func TestGoldenJournalUnderItsOldScopeAnswersFromTheJournal(t *testing.T) {
	gt.ForEach(t, oldScopes, func(t *testing.T, w *gt.World) {
		a55Scope, cpScope := w.G.Scopes(t)
		ac, err := w.A55Client(t, payonce.WithScope(a55Scope))
		require.NoError(t, err)
		ch, err := ac.Charges.Create(t.Context(), gt.Order1, payonce.WithReference(gt.RefOrder1))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, chargeUUIDOf(t, w.Entries[gt.RefOrder1].Result), ch.UUID)

		cc, err := w.CoinepayClient(t, payonce.WithScope(cpScope))
		require.NoError(t, err)
		card, err := cc.Cards.Apply(t.Context(), gt.Job1, payonce.WithReference(gt.RefJob1))
		require.NoError(t, err)
		assert.Equal(t, cardIDOf(t, w.Entries[gt.RefJob1].Result), card.CardID)
		w.NoSecondCharge(t, 0, 0)
	})
}

// Every golden journal opened by today's code: what succeeded is answered
// from the journal, the declined charge stays declined, what was in doubt
// is resumed with its key (answered by the provider's replay: Coinepay,
// whose wire form did not change) or refused as in doubt (an A55 charge
// recorded in the guide's wire form, or a key past its window); a new
// order runs once. Nothing is charged twice.
func TestGoldenJournalUpgradesKeepEveryEntrysMeaning(t *testing.T) {
	gt.ForEach(t, nil, func(t *testing.T, w *gt.World) {
		a55Opts, cpOpts := w.UpgradeOptions(t)
		ac, err := w.A55Client(t, a55Opts...)
		require.NoError(t, err)
		cc, err := w.CoinepayClient(t, cpOpts...)
		require.NoError(t, err)

		ch, err := ac.Charges.Create(t.Context(), gt.Order1, payonce.WithReference(gt.RefOrder1))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, chargeUUIDOf(t, w.Entries[gt.RefOrder1].Result), ch.UUID)
		w.KeepsItsMeaning(t, gt.RefOrder1)

		_, err = ac.Charges.Create(t.Context(), gt.Order3, payonce.WithReference(gt.RefOrder3))
		require.ErrorIs(t, err, a55.ErrCardDeclined)
		var ae *payonce.APIError
		require.ErrorAs(t, err, &ae)
		assert.True(t, ae.FromJournal)
		w.KeepsItsMeaning(t, gt.RefOrder3)

		card, err := cc.Cards.Apply(t.Context(), gt.Job1, payonce.WithReference(gt.RefJob1))
		require.NoError(t, err)
		assert.True(t, card.Meta.FromJournal)
		assert.Equal(t, cardIDOf(t, w.Entries[gt.RefJob1].Result), card.CardID)
		w.KeepsItsMeaning(t, gt.RefJob1)

		past := w.PastWindow(t)
		ch, err = ac.Charges.Create(t.Context(), gt.Order2, payonce.WithReference(gt.RefOrder2))
		card, cerr := cc.Cards.Apply(t.Context(), gt.Job2, payonce.WithReference(gt.RefJob2))
		if past {
			// The journal's own clock (PostgreSQL's) says the golden
			// keys are past their window: in doubt, nothing sent
			// (TestGoldenJournalInDoubtIsSettledByLookup settles them).
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			require.ErrorIs(t, cerr, payonce.ErrOutcomeUnknown)
		} else {
			// Every golden recorded A55 charges in the idempotency
			// guide's wire form: in doubt, such an entry is never sent
			// again with today's body, and says so (settled by lookup:
			// TestGoldenJournalInDoubtIsSettledByLookup).
			require.ErrorIs(t, err, a55.ErrLegacyEntry)
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			assert.Nil(t, ch)
			assert.Equal(t, w.Entries[gt.RefOrder2].Key, payonce.KeyOf(err).String())
			require.NoError(t, cerr)
			assert.Equal(t, w.Entries[gt.RefJob2].Key, card.Meta.Key.String())
			assert.Equal(t, payonce.JournalSucceeded, w.KeepsItsMeaning(t, gt.RefJob2).State)
		}
		w.KeepsItsMeaning(t, gt.RefOrder2)

		_, err = ac.Charges.Create(t.Context(), gt.Order4, payonce.WithReference(gt.RefOrder4))
		require.NoError(t, err)
		_, err = cc.Cards.Apply(t.Context(), gt.Job3, payonce.WithReference(gt.RefJob3))
		require.NoError(t, err)
		w.NoSecondCharge(t, 1, 1)
	})
}

// An entry in doubt past its key's window is settled by looking it up at
// the provider, never sent again: an A55 charge by its summary, or, for
// an entry written before summaries, by the request, whose plain
// fingerprint is verified in its old form; a Coinepay card by the request.
func TestGoldenJournalInDoubtIsSettledByLookup(t *testing.T) {
	gt.ForEach(t, nil, func(t *testing.T, w *gt.World) {
		a55Opts, cpOpts := w.UpgradeOptions(t)
		w.Clock.Set(w.Entries[gt.RefJob2].KeyCreated.Add(25 * time.Hour))
		ac, err := w.A55Client(t, a55Opts...)
		require.NoError(t, err)
		cc, err := w.CoinepayClient(t, cpOpts...)
		require.NoError(t, err)

		if w.PastWindow(t) {
			_, err = ac.Charges.Create(t.Context(), gt.Order2, payonce.WithReference(gt.RefOrder2))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown, "in doubt, never sent again")
		}
		opts := &a55.SettleOptions{}
		if !w.G.Summary {
			_, err := ac.Charges.SettleCreate(t.Context(), gt.RefOrder2, opts)
			require.ErrorIs(t, err, payonce.ErrInvalidRequest, "no summary to match by: the request is needed")
			opts.Request = gt.Order2
		}
		s, err := ac.Charges.SettleCreate(t.Context(), gt.RefOrder2, opts)
		require.NoError(t, err)
		assert.True(t, s.Recorded)
		assert.Equal(t, payonce.JournalSucceeded, s.Entry.State)
		ch, err := ac.Charges.Create(t.Context(), gt.Order2, payonce.WithReference(gt.RefOrder2))
		require.NoError(t, err)
		assert.True(t, ch.Meta.FromJournal)
		assert.Equal(t, s.Charge.UUID, ch.UUID)
		w.KeepsItsMeaning(t, gt.RefOrder2)

		cs, err := cc.Cards.SettleApply(t.Context(), gt.RefJob2, gt.Job2, nil)
		require.NoError(t, err)
		assert.True(t, cs.Recorded)
		card, err := cc.Cards.Apply(t.Context(), gt.Job2, payonce.WithReference(gt.RefJob2))
		require.NoError(t, err)
		assert.True(t, card.Meta.FromJournal)
		assert.Equal(t, cs.Card.CardID, card.CardID)
		w.KeepsItsMeaning(t, gt.RefJob2)
		w.NoSecondCharge(t, 0, 0)
	})
}
