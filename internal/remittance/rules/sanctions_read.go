package rules

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/paygate/gateway/postings"
)

// Reading a sanctions list: a stream, one line at a time, so that memory
// stays within a line (and, for ParseSanctionsList, the index) whatever the
// file's size, with documented bounds refused by a clear error before any
// work on the excess.

// Bounds of ReadSanctionsList.
const (
	// SanctionsBytesMax bounds a list file: the consolidated public lists
	// (OFAC SDN and consolidated, EU, UN, UK) with every alias are a few
	// MiB as name,country,list,id lines.
	SanctionsBytesMax = 64 << 20
	// SanctionsRowsMax bounds the entries of one list: those lists
	// together hold well under 100 000 names and aliases.
	SanctionsRowsMax = 250_000
	// sanctionsLineBytesMax bounds one line of the CSV.
	sanctionsLineBytesMax = 4096
	// sanctionsNameRunesMax bounds a listed name (vessel and entity names
	// with their aliases run long, but not this long).
	sanctionsNameRunesMax = 512
	// sanctionsYieldEvery is how many entries a reader handles between
	// two runtime.Gosched: a load is background work, and lets the API's
	// goroutines run first.
	sanctionsYieldEvery = 512
)

// sanctionsRowsLimit and sanctionsBytesLimit are the bounds; tests lower them.
var (
	sanctionsRowsLimit        = SanctionsRowsMax
	sanctionsBytesLimit int64 = SanctionsBytesMax
)

// ReadSanctionsList reads a sanctions list as CSV and calls each with every
// entry, in order, as it is read; an error from each stops the read and is
// returned. It returns the number of entries. It holds one line at a time.
//
// The format, one entry per line:
//
//	name,country[,list,id]
//
// country is an ISO 3166-1 alpha-2 code or empty (any country); list and id
// are optional and only reported. A first line "name,country[,…]" is a
// header and skipped; blank lines are skipped. There are no comment lines: a
// listed name may start with "#" ("#1 Trading"), and encoding/csv writes
// such a name unquoted. Fields may be quoted CSV-style ("Acme, Inc.",US). At
// most SanctionsBytesMax bytes, SanctionsRowsMax entries and 4096 bytes per
// line; a name is UTF-8 of at most 512 characters, holds no invisible
// (default-ignorable) character and keeps at least one letter or digit
// after normalisation. Any malformed line fails the whole list (EINVALID on
// sanctions_list, naming the line): a silently shortened list would screen
// less than the operator believes. A caller that loads as it reads does so
// in one transaction, so that a failure leaves the old list whole.
func ReadSanctionsList(r io.Reader, each func(SanctionsEntry) error) (int, error) {
	return readSanctions(r, func(e SanctionsEntry, _ *[keyCases][]string) error { return each(e) })
}

// ParseSanctionsList reads a whole list (ReadSanctionsList) and indexes it
// for Screen.
func ParseSanctionsList(r io.Reader) (*SanctionsList, error) {
	var b SanctionsListBuilder
	if _, err := readSanctions(r, func(e SanctionsEntry, keys *[keyCases][]string) error {
		b.add(e, keys)
		return nil
	}); err != nil {
		return nil, err
	}
	return b.List(), nil
}

// SanctionsListBuilder builds a list from entries one at a time (the rows
// of the loaded list, as the lifecycle worker reads them), computing each
// entry's keys once. The zero value is an empty builder.
type SanctionsListBuilder struct {
	l SanctionsList
}

// Add checks an entry as a list line is checked and adds it; the error
// names no line.
func (b *SanctionsListBuilder) Add(e SanctionsEntry) error {
	keys, err := checkSanctionsEntry(&e)
	if err != nil {
		return postings.FieldErrorf("sanctions_list", "%q: %s", truncate(e.Name, 64), err)
	}
	if len(b.l.entries) >= sanctionsRowsLimit {
		return postings.FieldErrorf("sanctions_list", "has more than %d entries", sanctionsRowsLimit)
	}
	b.add(e, &keys)
	return nil
}

func (b *SanctionsListBuilder) add(e SanctionsEntry, keys *[keyCases][]string) {
	i := int32(len(b.l.entries))
	b.l.entries = append(b.l.entries, e)
	b.l.index.add(i, keys)
	if (i+1)%sanctionsYieldEvery == 0 {
		runtime.Gosched()
	}
}

// List returns the list built; the builder is not to be used after.
func (b *SanctionsListBuilder) List() *SanctionsList {
	l := b.l
	return &l
}

func readSanctions(r io.Reader, each func(SanctionsEntry, *[keyCases][]string) error) (int, error) {
	limited := &io.LimitedReader{R: r, N: sanctionsBytesLimit + 1}
	lr := &lineLimitReader{r: bufio.NewReaderSize(limited, 64<<10), max: sanctionsLineBytesMax}
	cr := csv.NewReader(lr)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	n := 0
	first := true
	for {
		rec, err := cr.Read()
		if limited.N <= 0 {
			return n, postings.FieldErrorf("sanctions_list", "is larger than %s, the largest list accepted", sizeText(sanctionsBytesLimit))
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return n, postings.FieldErrorf("sanctions_list", "line %d is longer than %d bytes", lr.line, sanctionsLineBytesMax)
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return n, postings.FieldErrorf("sanctions_list", "line %d: %v", pe.Line, pe.Err)
			}
			return n, postings.FieldErrorf("sanctions_list", "cannot be read: %v", err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if len(rec) >= 2 && strings.EqualFold(strings.TrimSpace(rec[0]), "name") &&
				strings.EqualFold(strings.TrimSpace(rec[1]), "country") {
				continue
			}
		}
		if len(rec) > 4 {
			return n, postings.FieldErrorf("sanctions_list", "line %d has %d fields; expected name,country[,list,id]", line, len(rec))
		}
		if n >= sanctionsRowsLimit {
			return n, postings.FieldErrorf("sanctions_list", "has more than %d entries", sanctionsRowsLimit)
		}
		e := SanctionsEntry{Name: strings.TrimSpace(rec[0])}
		if len(rec) > 1 {
			e.Country = strings.ToUpper(strings.TrimSpace(rec[1]))
		}
		if len(rec) > 2 {
			e.List = strings.TrimSpace(rec[2])
		}
		if len(rec) > 3 {
			e.ID = strings.TrimSpace(rec[3])
		}
		keys, err := checkSanctionsEntry(&e)
		if err != nil {
			return n, postings.FieldErrorf("sanctions_list", "line %d: %s", line, err)
		}
		if err := each(e, &keys); err != nil {
			return n, err
		}
		n++
		if n%sanctionsYieldEvery == 0 {
			runtime.Gosched()
		}
	}
}

// checkSanctionsEntry checks an entry's name and country and returns the
// name's keys; the error is a plain message for the caller to place.
func checkSanctionsEntry(e *SanctionsEntry) ([keyCases][]string, error) {
	var keys [keyCases][]string
	if !utf8.ValidString(e.Name) || utf8.RuneCountInString(e.Name) > sanctionsNameRunesMax {
		return keys, fmt.Errorf("the name is not UTF-8 text of at most %d characters", sanctionsNameRunesMax)
	}
	if r, found := invisibleInText(e.Name); found {
		return keys, fmt.Errorf("the name %s", invisibleMessage(r))
	}
	if e.Country != "" && !IsCountryCode(e.Country) {
		return keys, fmt.Errorf("%q is not an ISO 3166-1 alpha-2 country code", truncate(e.Country, 8))
	}
	for c := keyUpper; c < keyCases; c++ {
		keys[c] = screenKey(e.Name, c)
	}
	if len(keys[keyUpper]) == 0 || len(keys[keyLower]) == 0 {
		return keys, errors.New("the name has no letters or digits")
	}
	return keys, nil
}

var errLineTooLong = errors.New("line too long")

// lineLimitReader fails with errLineTooLong when a line exceeds max bytes,
// so that one endless line cannot exhaust memory in the CSV reader, and
// counts lines for error messages.
type lineLimitReader struct {
	r    *bufio.Reader
	max  int
	cur  int // bytes of the current line so far
	line int // 1-based number of the current line
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.line == 0 {
		l.line = 1
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.line++
			l.cur = 0
			continue
		}
		l.cur++
		if l.cur > l.max {
			return 0, errLineTooLong
		}
	}
	return n, err
}

// sizeText writes a size in MiB when it is whole MiB, else in bytes.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
