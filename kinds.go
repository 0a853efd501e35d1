package payonce

import (
	"errors"
)

// errKind is the kind of an error raised before sending: the sentinel of a
// *ValidationError, ErrInvalidConfig, or def.
func errKind(err error, def error) error {
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		return ve.Err
	case errors.Is(err, ErrInvalidConfig):
		return ErrInvalidConfig
	}
	return def
}

// keyKind is the kind of a validateKey error: the *ValidationError's
// sentinel (ErrKeyRequired, corekit.ErrKeyTooShort, corekit.ErrKeyTooLong or
// corekit.ErrKeyInvalidChars), else ErrInvalidRequest.
func keyKind(err error) error {
	var ke *ValidationError
	if errors.As(err, &ke) && ke.Err != nil {
		return ke.Err
	}
	return ErrInvalidRequest
}
