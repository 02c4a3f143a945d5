package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePorts(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []int
		err  string
	}{
		{"25430,25431,25432", []int{25430, 25431, 25432}, ""},
		{" 2000, 2001 ,2002", []int{2000, 2001, 2002}, ""},
		{"25430,25431", nil, "three ports"},
		// Ports in the ephemeral range are accepted (with a warning at
		// run): a test or a machine may have nothing else free.
		{"25430,25431,40000", []int{25430, 25431, 40000}, ""},
		{"32768,45000,65535", []int{32768, 45000, 65535}, ""},
		{"25430,25431,65536", nil, "1024 to 65535"},
		{"25430,25431,80", nil, "1024 to 65535"},
		{"25430,25431,x", nil, "not a port"},
	} {
		got, err := parsePorts(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parsePorts(%q) = %v, %v; want an error naming %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != 3 || got[0] != tt.want[0] || got[2] != tt.want[2] {
			t.Errorf("parsePorts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTarget(t *testing.T) {
	want := time.Date(2026, 11, 25, 10, 0, 0, 500_000_000, time.UTC)
	for _, in := range []string{"2026-11-25 10:00:00.5+00", "2026-11-25 11:00:00.5+01", "2026-11-25T10:00:00.5Z", "2026-11-25 10:00:00.5Z"} {
		got, err := parseTarget(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTarget(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// A moment without a zone would be read in some zone: refused.
	for _, in := range []string{"2026-11-25 10:00:00", "yesterday", ""} {
		if _, err := parseTarget(in); err == nil {
			t.Errorf("parseTarget(%q) accepted", in)
		}
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	var u usageError
	if err := run(context.Background(), []string{"frobnicate"}, &out, &errOut); !errors.As(err, &u) {
		t.Errorf("an unknown command: %v, want a usage error", err)
	}
	if err := run(context.Background(), []string{"restore", "-dir", t.TempDir()}, &out, &errOut); !errors.As(err, &u) || !strings.Contains(err.Error(), "-target") {
		t.Errorf("restore without -target: %v, want a usage error naming -target", err)
	}
	// The data key is required before anything is restored (issue 31,
	// point 2): a restore without it would serve nothing sealed.
	if err := run(context.Background(), []string{"restore", "-dir", t.TempDir(), "-target", "2026-11-25 10:00:00+00"}, &out, &errOut); !errors.As(err, &u) || !strings.Contains(err.Error(), "-key is required") {
		t.Errorf("restore without -key: %v, want a usage error naming -key", err)
	}
	missing := filepath.Join(t.TempDir(), "data.key")
	if err := run(context.Background(), []string{"restore", "-dir", t.TempDir(), "-target", "2026-11-25 10:00:00+00", "-key", missing}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "data key of the database restored") {
		t.Errorf("restore with a missing key file: %v, want a refusal naming the data key", err)
	}
	if err := run(context.Background(), []string{"state", "extra"}, &out, &errOut); !errors.As(err, &u) {
		t.Errorf("state with an argument: %v, want a usage error", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "restore") {
		t.Errorf("help: %v %q", err, out.String())
	}
}

func TestFormationPorts(t *testing.T) {
	for _, tt := range []struct {
		ports string
		nodes int
		want  string // the ports, or the error's words
	}{
		{"25430,25431,25432", 2, "[25430 25431 25432]"},
		{"25430,25431,25432", 3, "[25430 25431 25432 25433]"},
		{"26000,26001,26002,26010", 3, "[26000 26001 26002 26010]"},
		{"26000,26001,26002,26003", 2, "4 ports for 2 data nodes"},
		{"25430,25431,25432", 4, "2 or 3 data nodes"},
		{"25430,25431,25432", 1, "2 or 3 data nodes"},
	} {
		got, err := formationPorts(tt.ports, tt.nodes)
		if s := fmt.Sprint(got); err == nil && s != tt.want || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("formationPorts(%q, %d) = %v, %v; want %s", tt.ports, tt.nodes, got, err, tt.want)
		}
	}
}
