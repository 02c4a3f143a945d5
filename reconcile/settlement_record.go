package reconcile

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Recording a settlement reconciliation (records.go). Only a file that
// matched completely is recorded: a file with discrepancies is not
// accepted, so the corrected file the network sends next is not a second
// claim on the clearings they share. The same file again (the same
// SHA-256) is the same run: reported as already recorded, matched, never
// as billed twice.

// recordNameMax bounds the file's name and the actor as recorded.
const recordNameMax = 200

// recordText is s fit for a record: at most recordNameMax bytes,
// printable, else def.
func recordText(s, def string) string {
	s = printable(truncateText(strings.TrimSpace(s), recordNameMax-8))
	if s == "" || s == `""` {
		return def
	}
	return s
}

// printable is s as a person may see it: s itself when it is UTF-8 without
// control characters, else quoted with Go's escapes, so that no byte of a
// file's name or content reaches a terminal or a page raw.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
