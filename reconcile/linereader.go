package reconcile

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// lineReader passes a file through, line by line, and stops at the first
// line that no parser should see: one longer than lineBytesMax (a file
// without newlines would make the CSV reader buffer it whole) or one that
// is not UTF-8 (a Latin-1 or Windows-1252 export: its bytes would reach
// the report raw, and its names and ids would not be the network's). Both
// are faults of the whole file, reported with the line's number; the
// offending bytes are named by their value, never copied. Each
// reconciliation's parser reads through one.
type lineReader struct {
	r     io.Reader
	lines int64  // complete lines passed
	line  []byte // the current line so far (at most lineBytesMax)
	fault *FileError
}

// lineBytesMax bounds one line of a reconciliation file.
const lineBytesMax = 4096

var errLineRefused = errors.New("line refused")

func (l *lineReader) Read(p []byte) (int, error) {
	if l.fault != nil {
		return 0, errLineRefused
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			if l.check() {
				return i, errLineRefused
			}
			l.lines++
			l.line = l.line[:0]
			continue
		}
		if len(l.line) == lineBytesMax {
			l.fault = &FileError{Line: l.lines + 1, Msg: fmt.Sprintf("longer than %d bytes", lineBytesMax)}
			return i, errLineRefused
		}
		l.line = append(l.line, p[i])
	}
	if errors.Is(err, io.EOF) && l.check() { // the last line, without a newline
		return n, errLineRefused
	}
	return n, err
}

// check refuses the current line if it is not UTF-8, and reports whether
// it did.
func (l *lineReader) check() bool {
	if utf8.Valid(l.line) {
		return false
	}
	at := 0
	for at < len(l.line) {
		r, size := utf8.DecodeRune(l.line[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	l.fault = &FileError{Line: l.lines + 1, Msg: fmt.Sprintf("byte %d (0x%02X) is not UTF-8: a Latin-1 or Windows-1252 file? "+
		"Save it as UTF-8", at+1, l.line[at])}
	return true
}

// fileError turns an error of the stream into a FileError: the refused
// line's, or the stream's own.
func (l *lineReader) fileError(err error) error {
	if l.fault != nil {
		return l.fault
	}
	return &FileError{Msg: err.Error()}
}
