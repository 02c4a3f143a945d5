package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	keyA = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
	keyB = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"
)

// writeFiles writes name → body under dir ("" body: a directory).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// -from-restore takes only a finished, verified restore of a stopped
// cluster, and says which it is not.
func TestOpenRestoreRefuses(t *testing.T) {
	marker := `{"target":"2026-11-25T10:00:00Z","formation":"/var/ha","verified":"2026-11-25T11:00:00Z"}`
	good := map[string]string{restoreMarker: marker, "data.key": keyA, "pg/data/PG_VERSION": "15\n"}
	for _, tc := range []struct {
		name   string
		drop   string
		add    map[string]string
		refuse string
	}{
		{"verified", "", nil, ""},
		{"no mark of audit verify", restoreMarker, nil, "is not a finished, verified restore"},
		{"no key", "data.key", nil, "-from-restore: -key"},
		{"not a key", "", map[string]string{"data.key": "secret\n"}, "is not a data key"},
		{"no cluster", "pg/data/PG_VERSION", nil, "holds no restored cluster"},
		{"its server running", "", map[string]string{"pg/data/postmaster.pid": "4242\n"}, "a server runs on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{}
			for k, v := range good {
				if k != tc.drop {
					files[k] = v
				}
			}
			for k, v := range tc.add {
				files[k] = v
			}
			writeFiles(t, dir, files)
			r, err := openRestore(dir)
			if tc.refuse == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.pgData != filepath.Join(dir, "pg", "data") || !r.record.Target.Equal(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)) {
					t.Errorf("opened %+v", r)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("openRestore: %v, want %q", err, tc.refuse)
			}
		})
	}
}

// The restore's data key goes into the new gateway's directory; another
// key there is refused, never overwritten.
func TestCarryKey(t *testing.T) {
	r := &verifiedRestore{keyFile: "restored/data.key", key: []byte(keyA)}
	for _, tc := range []struct {
		name, there, refuse string
	}{
		{"no key yet", "", ""},
		{"the same key", keyA, ""},
		{"another key", keyB, "holds another data key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := filepath.Join(t.TempDir(), "gateway")
			if tc.there != "" {
				writeFiles(t, gw, map[string]string{"data.key": tc.there})
			}
			err := r.carryKey(gw)
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Errorf("carryKey: %v, want %q", err, tc.refuse)
				}
				if b, _ := os.ReadFile(filepath.Join(gw, "data.key")); string(b) != tc.there {
					t.Errorf("the key there was replaced")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(gw, "data.key"))
			if b, _ := os.ReadFile(filepath.Join(gw, "data.key")); err != nil || string(b) != keyA || st.Mode().Perm() != 0o600 {
				t.Errorf("the gateway's key is %q (%v), want the restore's, 0600", b, err)
			}
		})
	}
}

// `ha run -from-restore` refuses before it makes anything: the new -dir
// does not exist after a refusal.
func TestRunFromRestoreRefusesBeforeMaking(t *testing.T) {
	marker := `{"target":"2026-11-25T10:00:00Z","formation":"/var/ha","verified":"2026-11-25T11:00:00Z"}`
	for _, tc := range []struct {
		name    string
		restore map[string]string
		gwKey   string
		refuse  string
	}{
		{"not a verified restore", map[string]string{"data.key": keyA, "pg/data/PG_VERSION": "15\n"}, "", "is not a finished, verified restore"},
		{"another key in the gateway's directory", map[string]string{restoreMarker: marker, "data.key": keyA, "pg/data/PG_VERSION": "15\n"}, keyB, "holds another data key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			restored, gw, dir := filepath.Join(root, "restored"), filepath.Join(root, "gw"), filepath.Join(root, "ha-new")
			writeFiles(t, restored, tc.restore)
			if tc.gwKey != "" {
				writeFiles(t, gw, map[string]string{"data.key": tc.gwKey})
			}
			t.Setenv("GATEWAY_DATA_DIR", gw)
			var out lockedBuffer
			err := run(t.Context(), []string{"run", "-dir", dir, "-from-restore", restored, "-nodes", "2"}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Errorf("ha run -from-restore: %v, want %q\n%s", err, tc.refuse, out.String())
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("the refused run made %s", dir)
			}
		})
	}
}
