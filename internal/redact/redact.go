// Package redact hides the passwords of URLs in what profq prints: the profile arguments
// that reports and errors name, and the messages that quote them.
package redact

import (
	"net/url"
	"strings"
)

// hidden is what a password is replaced by, as url.URL.Redacted writes it.
const hidden = "xxxxx"

// URL is s, a URL as given (scheme://user:password@host/path), with its password replaced
// by "xxxxx" and the rest as given, so that a fleet query's selector keeps its quotes and
// braces. User information that is not valid in a URL (a space, a bad % escape) is replaced
// whole, as where its user name ends cannot be told. Anything that does not start with a
// scheme and :// (a file, host:port/path) is returned as given.
func URL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !isScheme(scheme) {
		return s
	}
	end := authorityEnd(rest, false)
	user, ok := hideUser(rest[:end])
	if !ok {
		return s
	}
	return scheme + "://" + user + rest[end:]
}

// Text is s with the password of every URL in it hidden as URL hides it; in a message, a
// URL's authority ends at white space.
func Text(s string) string {
	var b strings.Builder
	written := 0 // s[:written] is in b
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		start := i + j + len("://")
		if !endsWithScheme(s[:i+j]) {
			i = start
			continue
		}
		end := start + authorityEnd(s[start:], true)
		if user, ok := hideUser(s[start:end]); ok {
			b.WriteString(s[written:start])
			b.WriteString(user)
			written = end
		}
		i = end
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// authorityEnd is where the authority (user information, host and port) that s starts with
// ends: at the path, query or fragment, or, in a message (inText), at white space.
func authorityEnd(s string, inText bool) int {
	stop := "/?#"
	if inText {
		stop += " \t\r\n\v\f"
	}
	if i := strings.IndexAny(s, stop); i >= 0 {
		return i
	}
	return len(s)
}

// hideUser is the authority with its user information's password hidden, or all of its
// user information when that is not valid in a URL; false when there is nothing to hide.
// The user information ends at the authority's last @, as net/url reads it.
func hideUser(authority string) (string, bool) {
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return "", false
	}
	userinfo, host := authority[:at], authority[at:]
	if _, err := url.Parse("http://" + userinfo + "@h"); err != nil {
		return hidden + host, true
	}
	user, _, hasPassword := strings.Cut(userinfo, ":")
	if !hasPassword {
		return "", false
	}
	return user + ":" + hidden + host, true
}

// isScheme reports whether s is a URL scheme: a letter, then letters, digits, +, - and . (RFC
// 3986, section 3.1).
func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isSchemeByte(s[i]) {
			return false
		}
	}
	return true
}

// endsWithScheme reports whether s, the text before a "://", ends with a scheme: its last
// run of scheme bytes holds a letter, where a scheme can start.
func endsWithScheme(s string) bool {
	letter := false
	for i := len(s) - 1; i >= 0 && isSchemeByte(s[i]); i-- {
		letter = letter || isLetter(s[i])
	}
	return letter
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSchemeByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}
