package corekit

import "encoding/json"

// ReadErrorShape reads the common error bodies: {"message_key","message"},
// {"error":{"code","message","details"}} and {"code","message"} (a code
// given as a string or not at all). details, a pointer to the caller's
// slice of details, receives the "error" shape's details. ok is false for
// a body that is not one of them.
func ReadErrorShape(body []byte, details any) (requestID, code, message string, ok bool) {
	var v struct {
		MessageKey string          `json:"message_key"`
		Message    json.RawMessage `json:"message"`
		Code       json.RawMessage `json:"code"`
		RequestID  string          `json:"request_id"`
		Error      *struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", "", "", false
	}
	if v.Error != nil {
		if len(v.Error.Details) > 0 && string(v.Error.Details) != "null" && json.Unmarshal(v.Error.Details, details) != nil {
			return "", "", "", false
		}
		return v.RequestID, v.Error.Code, v.Error.Message, true
	}
	_ = json.Unmarshal(v.Message, &message)
	code = v.MessageKey
	if code == "" {
		_ = json.Unmarshal(v.Code, &code)
	}
	return v.RequestID, code, message, true
}
