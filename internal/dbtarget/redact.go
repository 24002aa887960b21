package dbtarget

import (
	"regexp"
	"strings"
)

// scheme is a URL scheme's name (RFC 3986, 3.1).
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// kvPassword is a password= and its value: bare, or quoted as libpq
// quotes, which counts only if the quote closes a value (a blank or the
// end follows it). Otherwise the quote after "x password=" that closes
// another value (user='x password=') would take the next value's
// opening quote for its end, and the password after it would be left.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'(\s|$)|\S+)`)

// Redact removes secrets from a target URL, so that a target can be named
// in output, logs and result documents. The kind that claims url redacts
// its own form; a URL no kind claims gets RedactAny.
func Redact(url string) string {
	if o, ok := lookup(url); ok && o.Redact != nil {
		return o.Redact(url)
	}
	return RedactAny(url)
}

// RedactAny hides what could be a secret in a URL of any form: the value
// of any password=... ("password=pw host=db", "?password=pw"), and
// everything between the first ':' after the scheme and the last '@'
// ("user:pw@tcp(host)/db", "scheme://user:pw@host"). A "://" counts as the
// scheme's end only after a scheme's name, so a password holding one
// ("user:a://b@tcp(host)/db") is still hidden; and the password=... goes
// first, so an '@' in its value cannot move the cut.
func RedactAny(s string) string {
	s = kvPassword.ReplaceAllString(s, "${1}xxxxx${2}")
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && scheme.MatchString(s[:i]) {
		start = i + len("://")
	}
	if at := strings.LastIndex(s, "@"); at > start {
		if colon := strings.Index(s[start:at], ":"); colon >= 0 {
			s = s[:start+colon+1] + "xxxxx" + s[at:]
		}
	}
	return s
}

// Scrub removes secret from text (an error message, say) wherever it occurs.
func Scrub(text, secret string) string {
	if secret == "" {
		return text
	}
	return strings.ReplaceAll(text, secret, "xxxxx")
}
