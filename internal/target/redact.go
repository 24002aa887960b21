package target

import (
	"regexp"
	"strings"
)

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact removes secrets from a target URL, so that a target can be named
// in output, logs and result documents. The kind that claims url redacts
// its own form; a URL no kind claims gets RedactAny.
func Redact(url string) string {
	if o, ok := lookup(url); ok && o.Redact != nil {
		return o.Redact(url)
	}
	return RedactAny(url)
}

// RedactAny hides what could be a secret in a URL of any form: everything
// between the first ':' after the scheme and the last '@'
// ("user:pw@tcp(host)/db", "scheme://user:pw@host"), and the value of any
// password=... ("password=pw host=db", "?password=pw").
func RedactAny(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	if at := strings.LastIndex(s, "@"); at > start {
		if colon := strings.Index(s[start:at], ":"); colon >= 0 {
			s = s[:start+colon+1] + "xxxxx" + s[at:]
		}
	}
	return kvPassword.ReplaceAllString(s, "${1}xxxxx")
}

// Scrub removes secret from text (an error message, say) wherever it occurs.
func Scrub(text, secret string) string {
	if secret == "" {
		return text
	}
	return strings.ReplaceAll(text, secret, "xxxxx")
}
