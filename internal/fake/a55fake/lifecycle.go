package a55fake

import (
	"container/heap"
	"errors"
	"fmt"
	"time"
)

// Event is a change A55's side makes to a charge, outside any API call
// of the merchant: the payer pays a PIX or a boleto, the bank registers a
// boleto, the payer passes, fails or leaves a 3DS challenge, the card
// network opens and settles a chargeback, a refund made on A55's
// dashboard. Each one the fake is told to make (Trigger: from the admin
// API, the console or a55test) fires the signed webhook A55 sends, as
// Stripe's CLI trigger does. Some also happen by the fake's clock: a PIX
// expires, a boleto is canceled at its due date, a 3DS challenge left
// for ThreeDSTimeout is abandoned.
type Event string

// The events and the statuses they lead to.
const (
	EventPixPaid                 Event = "pix.paid"                  // issued PIX → paid
	EventPixExpired              Event = "pix.expired"               // issued PIX → expired
	EventBoletoRegistered        Event = "boleto.registered"         // issued boleto → pending (registered at the bank)
	EventBoletoPaid              Event = "boleto.paid"               // issued or pending boleto → paid
	EventBoletoExpired           Event = "boleto.expired"            // issued or pending boleto → canceled
	Event3DSCompleted            Event = "3ds.completed"             // waiting challenge → the card's outcome: confirmed, or error/declined
	Event3DSFailed               Event = "3ds.failed"                // waiting challenge → error, 3DS_FAILED
	Event3DSAbandoned            Event = "3ds.abandoned"             // waiting challenge → canceled
	EventRefund                  Event = "refund"                    // captured → refunded (all of it) or amount_remaining lowered (part)
	EventRefundFailed            Event = "refund.failed"             // captured → refund_error, amount_remaining unchanged
	EventChargebackRequested     Event = "chargeback.requested"      // captured card charge → chargeback_requested
	EventChargebackPreResolution Event = "chargeback.pre_resolution" // chargeback_requested → pre_chargeback_resolution
	EventChargebackReversed      Event = "chargeback.reversed"       // disputed → chargeback_reversed (the merchant keeps the money)
	EventChargebackRefunded      Event = "chargeback.refunded"       // disputed → chargeback_refunded (the payer gets it back)
	EventChargebackLost          Event = "chargeback.lost"           // disputed or captured card charge → chargeback (the dispute lost)
	EventCaptureSubmitted        Event = "capture.submitted"         // authorised card charge → pre_captured (A55 captured it itself)
	EventCaptureConfirmed        Event = "capture.confirmed"         // pre_captured → paid (the acquirer confirmed the capture)
	EventAcquirerConfirmed       Event = "acquirer.confirmed"        // pending at the acquirer after a TIMEOUT → confirmed
	EventAcquirerDeclined        Event = "acquirer.declined"         // pending at the acquirer after a TIMEOUT → declined, CARD_DECLINED
	EventAcquirerFailed          Event = "acquirer.failed"           // pending at the acquirer after a TIMEOUT → error, TIMEOUT
)

// Events returns every event, in the order the console lists them.
func Events() []Event {
	return []Event{EventPixPaid, EventPixExpired, EventBoletoRegistered, EventBoletoPaid, EventBoletoExpired,
		Event3DSCompleted, Event3DSFailed, Event3DSAbandoned,
		EventAcquirerConfirmed, EventAcquirerDeclined, EventAcquirerFailed, EventCaptureSubmitted, EventCaptureConfirmed,
		EventRefund, EventRefundFailed,
		EventChargebackRequested, EventChargebackPreResolution, EventChargebackReversed, EventChargebackRefunded, EventChargebackLost}
}

// Errors of Trigger.
var (
	// ErrUnknownEvent: not one of Events().
	ErrUnknownEvent = errors.New("unknown event")
	// ErrEventNotAllowed: the charge's method or status does not take the
	// event (a *TransitionError says which).
	ErrEventNotAllowed = errors.New("event not allowed")
	// ErrInvalidAmount: a refund amount that is not a positive amount of
	// the charge's currency.
	ErrInvalidAmount = errors.New("invalid amount")
)

// TransitionError is an event a charge does not take in its status.
type TransitionError struct {
	Event   Event
	Status  string // the charge's status
	Allowed []Event
	Reason  string
}

// Error says which event the charge's status refused and what it takes.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("%s is not allowed on a %s charge: %s (allowed: %v)", e.Event, e.Status, e.Reason, e.Allowed)
}

// Unwrap makes errors.Is(err, ErrEventNotAllowed) hold.
func (e *TransitionError) Unwrap() error { return ErrEventNotAllowed }

// TriggerOptions are an event's optional values.
type TriggerOptions struct {
	Amount string // refund, refund.failed: a decimal amount (default: all that remains)
	Reason string // chargeback.requested, chargeback.lost: the reason (default "fraud", or the open dispute's)
}

// disputed reports whether a charge is in an open chargeback.
func disputed(c *charge) bool {
	return c.Status == StatusChargebackRequested || c.Status == StatusPreChargebackResolution
}

// challengeWaits reports whether c's 3DS challenge waits for the payer:
// a charge sent to one (pending), or one answered 3DS_REQUIRED (error)
// whose url_3ds leads to it.
func challengeWaits(c *charge) bool {
	return c.threeDS && (c.Status == StatusPending && c.acquirerThen == "" || c.Status == StatusError && c.required3DS)
}

// awaitingAcquirer reports whether c waits for the acquirer's answer, a
// TIMEOUT having been answered for it.
func awaitingAcquirer(c *charge) bool { return c.acquirerThen != "" && c.Status == StatusPending }

// settled reports whether c holds captured money that can still go back:
// what a refund (and, for a card, a chargeback) takes.
func settled(c *charge) bool {
	return (c.Status == StatusConfirmed || c.Status == StatusPaid || c.Status == StatusRefundError) && !c.remaining().isZero()
}

// allowed returns the events c takes now.
func allowed(c *charge) []Event {
	var out []Event
	switch {
	case c.TypeCharge == typePix && c.Status == StatusIssued:
		out = append(out, EventPixPaid, EventPixExpired)
	case c.TypeCharge == typeBoleto && c.Status == StatusIssued:
		out = append(out, EventBoletoRegistered, EventBoletoPaid, EventBoletoExpired)
	case c.TypeCharge == typeBoleto && c.Status == StatusPending:
		out = append(out, EventBoletoPaid, EventBoletoExpired)
	case challengeWaits(c):
		out = append(out, Event3DSCompleted, Event3DSFailed, Event3DSAbandoned)
	case awaitingAcquirer(c):
		out = append(out, EventAcquirerConfirmed, EventAcquirerDeclined, EventAcquirerFailed)
	case c.Status == StatusConfirmed && c.authorised:
		out = append(out, EventCaptureSubmitted)
	case c.Status == StatusPreCaptured:
		out = append(out, EventCaptureConfirmed)
	case disputed(c):
		if c.Status == StatusChargebackRequested {
			out = append(out, EventChargebackPreResolution)
		}
		out = append(out, EventChargebackReversed, EventChargebackRefunded, EventChargebackLost)
	}
	if settled(c) {
		out = append(out, EventRefund, EventRefundFailed)
		if c.isCard() {
			out = append(out, EventChargebackRequested, EventChargebackLost)
		}
	}
	return out
}

// event is what a webhook reports besides the charge's status.
type event struct {
	refund *decimal // the amount a refund just returned, or failed to return (refund_error)
}

// applyLocked makes ev happen to c at now and returns the webhook's
// extras; f.mu is held.
func (f *Fake) applyLocked(c *charge, ev Event, opt TriggerOptions, now time.Time) (event, error) {
	known := false
	for _, e := range Events() {
		known = known || e == ev
	}
	if !known {
		return event{}, fmt.Errorf("%w %q: want one of %v", ErrUnknownEvent, ev, Events())
	}
	ok := false
	for _, e := range allowed(c) {
		ok = ok || e == ev
	}
	if !ok {
		return event{}, &TransitionError{Event: ev, Status: c.Status, Allowed: allowed(c), Reason: whyNot(c, ev)}
	}
	var out event
	switch ev {
	case EventPixPaid, EventBoletoPaid:
		c.Status, c.Captured = StatusPaid, c.Amount
	case EventPixExpired:
		c.Status = StatusExpired
	case EventBoletoRegistered:
		c.Status = StatusPending
	case EventBoletoExpired:
		c.Status = StatusCanceled
	case Event3DSAbandoned:
		c.Status, c.required3DS = StatusCanceled, false
	case Event3DSCompleted:
		c.required3DS = false
		if o := c.outcome; o.code != "" {
			c.Status = o.status
			c.Message = []ChargeMessage{{Code: o.code, Source: "acquirer", Description: o.desc}}
			break
		}
		c.Message = []ChargeMessage{}
		confirmLocked(c)
	case Event3DSFailed:
		c.Status, c.required3DS = StatusError, false
		c.Message = []ChargeMessage{{Code: "3DS_FAILED", Source: "3ds", Description: "the cardholder failed the 3DS challenge"}}
	case EventAcquirerConfirmed:
		c.acquirerThen = ""
		c.Message = []ChargeMessage{}
		confirmLocked(c)
	case EventAcquirerDeclined:
		c.Status, c.acquirerThen = StatusDeclined, ""
		c.Message = []ChargeMessage{{Code: "CARD_DECLINED", Source: "acquirer", Description: "the issuer declined the card"}}
	case EventAcquirerFailed:
		c.Status, c.acquirerThen = StatusError, ""
		c.Message = []ChargeMessage{{Code: AnswerTimeout, Source: "acquirer", Description: "the acquirer did not respond in time"}}
	case EventCaptureSubmitted:
		c.Captured, c.authorised, c.Status = c.Amount, false, StatusPreCaptured
		c.ExpiresAt = time.Time{} // waits for capture.confirmed
	case EventCaptureConfirmed:
		c.Status = StatusPaid
	case EventRefund, EventRefundFailed:
		var amount *decimal
		if opt.Amount != "" {
			d, err := parsePositive(opt.Amount, c.places())
			if err != nil {
				return event{}, fmt.Errorf("%w: %s: %v", ErrInvalidAmount, opt.Amount, err)
			}
			amount = &d
		}
		refund := refundLocked
		if ev == EventRefundFailed {
			refund = failRefundLocked
		}
		moved, err := refund(c, amount)
		if err != nil {
			return event{}, &TransitionError{Event: ev, Status: c.Status, Allowed: allowed(c), Reason: err.desc}
		}
		out.refund = &moved
	case EventChargebackRequested:
		c.ChargebackReason = opt.Reason
		if c.ChargebackReason == "" {
			c.ChargebackReason = "fraud"
		}
		c.Status = StatusChargebackRequested
	case EventChargebackLost:
		switch {
		case opt.Reason != "":
			c.ChargebackReason = opt.Reason
		case !disputed(c):
			c.ChargebackReason = "fraud"
		}
		c.Status, c.Refunded = StatusChargeback, c.Captured
	case EventChargebackPreResolution:
		c.Status = StatusPreChargebackResolution
	case EventChargebackReversed:
		c.Status = StatusChargebackReversed
	case EventChargebackRefunded:
		c.Status, c.Refunded = StatusChargebackRefunded, c.Captured
	}
	c.UpdatedAt = now
	return out, nil
}

// whyNot says why c does not take ev.
func whyNot(c *charge, ev Event) string {
	switch ev {
	case EventPixPaid, EventPixExpired:
		if c.TypeCharge != typePix {
			return "not a PIX charge"
		}
		return "only an issued PIX charge is paid or expires"
	case EventBoletoRegistered, EventBoletoPaid, EventBoletoExpired:
		if c.TypeCharge != typeBoleto {
			return "not a boleto"
		}
		return "only an issued (or registered) boleto is registered, paid or expires"
	case Event3DSCompleted, Event3DSFailed, Event3DSAbandoned:
		return "no 3DS challenge is waiting"
	case EventAcquirerConfirmed, EventAcquirerDeclined, EventAcquirerFailed:
		return "no charge answered TIMEOUT waits for the acquirer"
	case EventCaptureSubmitted:
		return "only an authorised card charge (capture false, nothing captured) is captured"
	case EventCaptureConfirmed:
		return "only a pre_captured charge has a capture to confirm"
	case EventChargebackRequested, EventChargebackLost:
		if !c.isCard() {
			return "only card charges have chargebacks (PIX and boleto have none)"
		}
		return "only a captured charge with an amount remaining (or an open chargeback) is disputed"
	case EventRefund, EventRefundFailed:
		return "only a captured charge (confirmed, paid or refund_error) with an amount remaining is refunded"
	}
	return "no chargeback is open"
}

// Trigger makes ev happen to the charge now and fires its webhook; it
// returns the charge as Get answers it, the events it takes next and the
// delivery (nil when the charge has no webhook_url).
func (f *Fake) Trigger(chargeUUID string, ev Event, opt TriggerOptions) (TriggerResult, error) {
	f.sweep()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.charges[chargeUUID]
	if !ok {
		return TriggerResult{}, ErrUnknownCharge
	}
	extra, err := f.applyLocked(c, ev, opt, f.e.Clock().Now().UTC())
	if err != nil {
		return TriggerResult{}, err
	}
	res := f.stateLocked(c)
	if d := f.hooks.enqueue(c, extra); d != nil {
		f.hooks.mu.Lock()
		dc := d.clone()
		f.hooks.mu.Unlock()
		res.Delivery = &dc
	}
	return res, nil
}

// ChargeState returns the charge as Get answers it and the events it
// takes now.
func (f *Fake) ChargeState(chargeUUID string) (TriggerResult, error) {
	f.sweep()
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.charges[chargeUUID]
	if !ok {
		return TriggerResult{}, ErrUnknownCharge
	}
	return f.stateLocked(c), nil
}

// TriggerResult is a charge after an event: as Get answers it, its
// status, the events it takes next and the webhook the event fired.
type TriggerResult struct {
	Charge   []byte           `json:"-"`
	Status   string           `json:"status"`
	Events   []Event          `json:"events"`
	Delivery *WebhookDelivery `json:"delivery"`
}

func (f *Fake) stateLocked(c *charge) TriggerResult {
	ev := allowed(c)
	if ev == nil {
		ev = []Event{}
	}
	return TriggerResult{Charge: f.chargeAnswer(c).Body, Status: c.Status, Events: ev}
}

// ---- the fake's clock: expiries

// timedCharge is a charge waiting for its timed end.
type timedCharge struct {
	at time.Time
	c  *charge
}

// timers orders the waiting charges by their end, earliest first.
type timers []timedCharge

func (t timers) Len() int           { return len(t) }
func (t timers) Less(i, j int) bool { return t[i].at.Before(t[j].at) }
func (t timers) Swap(i, j int)      { t[i], t[j] = t[j], t[i] }
func (t *timers) Push(x any)        { *t = append(*t, x.(timedCharge)) }
func (t *timers) Pop() any {
	old := *t
	x := old[len(old)-1]
	old[len(old)-1] = timedCharge{}
	*t = old[:len(old)-1]
	return x
}

// expiryPoll is how often, in real time, the background goroutine looks
// at the fake clock while charges wait for their end.
const expiryPoll = 20 * time.Millisecond

// timeLocked schedules c's timed end, if it has one; f.mu is held.
func (f *Fake) timeLocked(c *charge) {
	if c.ExpiresAt.IsZero() {
		return
	}
	heap.Push(&f.timers, timedCharge{at: c.ExpiresAt, c: c})
	if len(f.timers) > 2*max(len(f.charges), 64) {
		f.compactTimersLocked() // charges the cap dropped, or that ended otherwise
	}
	f.nextDue.Store(f.timers[0].at.UnixNano())
	if !f.sweeping && !f.closed {
		f.sweeping = true
		f.sweepWG.Add(1)
		go f.sweepLoop()
	}
}

// compactTimersLocked drops the timers of charges no longer kept or no
// longer waiting, so that the timers stay within the charges' cap.
func (f *Fake) compactTimersLocked() {
	kept := f.timers[:0]
	for _, t := range f.timers {
		if f.charges[t.c.UUID] == t.c && t.c.ExpiresAt.Equal(t.at) && expiry(t.c) != "" {
			kept = append(kept, t)
		}
	}
	clear(f.timers[len(kept):])
	f.timers = kept
	heap.Init(&f.timers)
}

// expiry is what happens to c when its time is up, or "" when it no
// longer waits.
func expiry(c *charge) Event {
	switch {
	case c.TypeCharge == typePix && c.Status == StatusIssued:
		return EventPixExpired
	case c.TypeCharge == typeBoleto && (c.Status == StatusIssued || c.Status == StatusPending):
		return EventBoletoExpired
	case challengeWaits(c):
		return Event3DSAbandoned
	case awaitingAcquirer(c):
		return c.acquirerThen
	case c.Status == StatusPreCaptured:
		return EventCaptureConfirmed
	}
	return ""
}

// sweep ends every charge whose time is up on the fake clock, each with
// its webhook. It costs one atomic load when nothing is due.
func (f *Fake) sweep() {
	now := f.e.Clock().Now()
	if next := f.nextDue.Load(); next == 0 || now.UnixNano() < next {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweepLocked(now)
}

func (f *Fake) sweepLocked(now time.Time) {
	for len(f.timers) > 0 && !now.Before(f.timers[0].at) {
		t := heap.Pop(&f.timers).(timedCharge)
		c := t.c
		if f.charges[c.UUID] != c || !c.ExpiresAt.Equal(t.at) {
			continue // evicted, or its end moved
		}
		if ev := expiry(c); ev != "" {
			if extra, err := f.applyLocked(c, ev, TriggerOptions{}, t.at.UTC()); err == nil {
				f.hooks.enqueue(c, extra)
			}
		}
	}
	if len(f.timers) > 0 {
		f.nextDue.Store(f.timers[0].at.UnixNano())
	} else {
		f.nextDue.Store(0)
	}
}

// sweepLoop sweeps while charges wait for their end, until Close.
func (f *Fake) sweepLoop() {
	defer f.sweepWG.Done()
	t := time.NewTicker(expiryPoll)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.sweep()
		f.mu.Lock()
		if len(f.timers) == 0 || f.closed {
			f.sweeping = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}
