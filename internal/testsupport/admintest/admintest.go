package admintest

import (
	"encoding/json"
	"net/http"
)

// FaultsFired returns how many times the fault rules of the fake at
// baseURL fired in all, and how many rules it lists; 0, 0 when the admin
// API cannot be read.
func FaultsFired(baseURL string) (fired, rules int) {
	resp, err := http.Get(baseURL + "/_fakepay/faults")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var out struct {
		Rules []struct {
			Fired int `json:"fired"`
		} `json:"rules"`
	}
	if json.NewDecoder(resp.Body).Decode(&out) != nil {
		return 0, 0
	}
	for _, r := range out.Rules {
		fired += r.Fired
	}
	return fired, len(out.Rules)
}
