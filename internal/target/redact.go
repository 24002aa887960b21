package target

import (
	"net/url"
	"regexp"
	"strings"
)

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// Redact removes passwords from a URL or a keyword/value DSN, so that a
// target can be named in output, logs and result documents.
func Redact(s string) string {
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
			q := u.Query()
			if q.Has("password") {
				q.Set("password", "xxxxx")
				u.RawQuery = q.Encode()
			}
			return u.String()
		}
		// An unparsable URL may still hold a password between ':' and '@'.
		if at := strings.LastIndex(s, "@"); at > 0 {
			scheme := strings.Index(s, "://") + 3
			if colon := strings.Index(s[scheme:at], ":"); colon >= 0 {
				return s[:scheme+colon+1] + "xxxxx" + s[at:]
			}
		}
		return s
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
