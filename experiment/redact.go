package experiment

import "regexp"

// dsnPasswordRE finds the password of a go-sql-driver DSN
// (user:password@tcp(host)/db, also unix(...) or a bare @/db) anywhere in a
// text: in [server] dsn, in a comment, in any string.
var dsnPasswordRE = regexp.MustCompile(`([A-Za-z0-9_.$\-]+):[^\s"'` + "`" + `]*@((?:tcp6?|unix(?:gram)?)?\(|/)`)

// Redact returns text with the password of every DSN in it removed
// (user:secret@tcp(h)/db becomes user@tcp(h)/db), so that a manifest's
// text can be stored (run.json) and printed. A run from the redacted text
// takes the password from $BENCHMATRIX_PASSWORD, as a DSN without one
// does.
func Redact(text string) string {
	return dsnPasswordRE.ReplaceAllString(text, "$1@$2")
}

// Stored is the manifest's text as benchmatrix keeps it: without secrets.
func (m *Manifest) Stored() string { return Redact(m.Source) }
