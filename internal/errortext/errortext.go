package errortext

import (
	"regexp"
	"strings"
)

// wordRE matches the words of an error text: a key or a code counts as
// one word, punctuation separates.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}_-]+`)

// RepeatedPhrase returns the first phrase of three or more words that
// appears twice in s (case-insensitively), or "".
func RepeatedPhrase(s string) string {
	words := wordRE.FindAllString(strings.ToLower(s), -1)
	seen := map[string]bool{}
	for i := 0; i+3 <= len(words); i++ {
		p := strings.Join(words[i:i+3], " ")
		if seen[p] {
			return p
		}
		seen[p] = true
	}
	return ""
}

// SharesPhrase reports whether s repeats a phrase of three or more words
// of said (case-insensitively): writing s after said would say it twice.
func SharesPhrase(said, s string) bool {
	words := wordRE.FindAllString(strings.ToLower(s), -1)
	if len(words) < 3 {
		return false
	}
	prior := wordRE.FindAllString(strings.ToLower(said), -1)
	seen := make(map[string]bool, len(prior))
	for i := 0; i+3 <= len(prior); i++ {
		seen[strings.Join(prior[i:i+3], " ")] = true
	}
	for i := 0; i+3 <= len(words); i++ {
		if seen[strings.Join(words[i:i+3], " ")] {
			return true
		}
	}
	return false
}
