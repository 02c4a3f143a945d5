package rules

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/paygate/gateway/postings"
)

// Issue 27, point 8(e): an 8 MiB list took 536 MB. The reader holds a line
// at a time, refuses past documented bounds, and the index holds a bounded
// number of bytes per entry.

// linesReader generates n list lines of about width bytes without holding
// them: a file far larger than memory should ever see.
type linesReader struct {
	n, width, i int
	buf         bytes.Buffer
}

func (g *linesReader) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i < g.n {
		// The name is short (cheap to key); the list field makes the width.
		fmt.Fprintf(&g.buf, "Entity %d,IR,%s,%d\n", g.i, strings.Repeat("L", g.width), g.i)
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// listOfSize is a list of about size bytes of distinct company names.
func listOfSize(size int) []byte {
	var b bytes.Buffer
	b.WriteString("name,country,list,id\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Entity Number %d Trading Holdings LLC,IR,OFAC-SDN,%d\n", i, i)
	}
	return b.Bytes()
}

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestReadSanctionsListStreams reads 24 MiB of list and samples the heap as
// it goes: it never holds more than a small part of what it read.
func TestReadSanctionsListStreams(t *testing.T) {
	base := heapNow()
	var peak uint64
	g := &linesReader{n: 8000, width: 3000}
	n, err := ReadSanctionsList(g, func(e SanctionsEntry) error {
		if g.i%500 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
		return nil
	})
	if err != nil || n != 8000 {
		t.Fatalf("%d entries, %v", n, err)
	}
	// 24 MiB went through; a reader that kept it would exceed this bound
	// (collection lags allocation, hence the margin).
	if grown := int64(peak) - int64(base); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB while streaming 24 MiB", grown>>20)
	}
}

// TestSanctionsListBytesPerEntry: the index of a parsed list holds at most
// a few hundred bytes per entry (a string-keyed index held about 1 KiB).
func TestSanctionsListBytesPerEntry(t *testing.T) {
	data := listOfSize(2 << 20)
	base := heapNow()
	l, err := ParseSanctionsList(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	perEntry := (int64(heapNow()) - int64(base)) / int64(l.Len())
	runtime.KeepAlive(l)
	if perEntry > 512 {
		t.Errorf("%d bytes per entry of %d", perEntry, l.Len())
	}
	t.Logf("%d entries, %d bytes each", l.Len(), perEntry)
}

// TestReadSanctionsListBounds: past the byte or row bound, the whole list is
// refused with an error that says the bound; a callback's error stops it.
func TestReadSanctionsListBounds(t *testing.T) {
	oldBytes, oldRows := sanctionsBytesLimit, sanctionsRowsLimit
	defer func() { sanctionsBytesLimit, sanctionsRowsLimit = oldBytes, oldRows }()
	sanctionsBytesLimit, sanctionsRowsLimit = 64<<10, 1000

	tests := []struct {
		desc string
		in   io.Reader
		want string
	}{
		{"bytes", &linesReader{n: 100, width: 1000}, "is larger than 65536 bytes"},
		{"rows", &linesReader{n: 1001, width: 1}, "has more than 1000 entries"},
	}
	for _, tt := range tests {
		n, err := ReadSanctionsList(tt.in, func(SanctionsEntry) error { return nil })
		if e := postings.AsError(err); err == nil || e.Field != "sanctions_list" || !strings.Contains(e.Message, tt.want) {
			t.Errorf("%s: %d entries, %v; want %q", tt.desc, n, err, tt.want)
		}
	}
	if n, err := ReadSanctionsList(&linesReader{n: 1000, width: 1}, func(SanctionsEntry) error { return nil }); err != nil || n != 1000 {
		t.Errorf("at the row bound: %d, %v", n, err)
	}
	stop := fmt.Errorf("stop")
	if n, err := ReadSanctionsList(&linesReader{n: 10, width: 1}, func(SanctionsEntry) error { return stop }); err != stop || n != 0 {
		t.Errorf("callback error: %d, %v", n, err)
	}
}

// benchList8MiB runs one (which returns heap bytes) over an 8 MiB list
// (the console's largest upload) and reports the largest value as unit.
func benchList8MiB(b *testing.B, unit string, one func(data []byte, base uint64) (uint64, error)) {
	data := listOfSize(8 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var most uint64
	for b.Loop() {
		v, err := one(data, heapNow())
		if err != nil {
			b.Fatal(err)
		}
		most = max(most, v)
	}
	b.ReportMetric(float64(most)/(1<<20), unit)
}

// BenchmarkParseSanctionsList8MiB parses and indexes the list, reporting
// the heap the list keeps.
func BenchmarkParseSanctionsList8MiB(b *testing.B) {
	benchList8MiB(b, "MiB-kept", func(data []byte, base uint64) (uint64, error) {
		l, err := ParseSanctionsList(bytes.NewReader(data))
		after := heapNow()
		runtime.KeepAlive(l)
		return max(after, base) - base, err
	})
}

// BenchmarkReadSanctionsList8MiB reads the list as a stream (the load's
// path), reporting the largest heap seen while reading.
func BenchmarkReadSanctionsList8MiB(b *testing.B) {
	benchList8MiB(b, "MiB-peak", func(data []byte, base uint64) (uint64, error) {
		var peak uint64
		n := 0
		_, err := ReadSanctionsList(bytes.NewReader(data), func(SanctionsEntry) error {
			if n++; n%10000 == 0 {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > base {
					peak = max(peak, m.HeapAlloc-base)
				}
			}
			return nil
		})
		return peak, err
	})
}
