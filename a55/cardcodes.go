package a55

// Return codes of a failed card charge, as the first code of its message
// list. They are the codes A55's sandbox simulator answers for a card
// number's last digit (see docs/a55.md) and the acquirer codes of the same
// meaning in production.
const (
	CodeNotAuthorized = "05" // generic decline (sandbox: last digit 2)
	CodeExpiredCard   = "57" // expired card (sandbox: last digit 3)
	CodeCardProblem   = "70" // a problem with the card (sandbox: last digit 8)
	CodeCanceledCard  = "77" // canceled card (sandbox: last digit 7)
	CodeBlockedCard   = "78" // blocked card (sandbox: last digit 5)
	CodeTimeout       = "99" // the authorisation timed out (sandbox: last digit 6, sometimes 9)
)

// chargeCodeKind maps the code of a failed charge to its sentinel: the
// numeric return codes above first, then A55's named codes (codeKind). It
// returns nil for a code it does not know.
func chargeCodeKind(code string) error {
	switch code {
	case CodeNotAuthorized, CodeExpiredCard, CodeCanceledCard, CodeBlockedCard:
		return ErrCardDeclined
	case CodeTimeout, CodeCardProblem:
		return ErrChargeFailed
	}
	return codeKind(code)
}
