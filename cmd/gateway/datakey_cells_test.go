package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/merchant"
)

// The data key over two cells: a rotation that fails in b2 names the cells
// it reached and not; the same command again finishes it (the version a1
// has, the same wrapped key, added to b2; no new version); the next
// rotation adds one version to both; the re-seal runs in both, after which
// every sealed value of each cell opens with that cell's keyring and none
// with the data key alone (the older version). serve and the data key's
// commands refuse a cell bound to another key, naming it.
func TestDataKeyOverCells(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, dbA, dbB := cellsGateway(t)
	g.mustRun("cells", "init")
	for _, cell := range []string{"a1", "b2"} {
		var c credentials
		if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "Keyed "+cell, "--currencies", "USD", "--cell", cell)), &c); err != nil {
			t.Fatal(err)
		}
	}
	wrapped := func(url string) string {
		return queryIn(t, url, "select coalesce(string_agg(version || ':' || encode(wrapped, 'hex'), ',' order by version), '') from data_key_versions")
	}

	// b2 refuses the write (a fault planted in it): a1 has the version, b2
	// not, and the command says so.
	sqlIn(t, dbB, `create function refuse_key() returns trigger language plpgsql as $$ begin raise exception 'b2 refuses'; end $$;
		create trigger refuse_key before insert on data_key_versions for each row execute function refuse_key()`)
	g.mustFail("written in cells a1; NOT in b2 (", "datakey", "rotate")
	if a, b := wrapped(dbA), wrapped(dbB); !strings.HasPrefix(a, "1:") || b != "" {
		t.Fatalf("after a rotation cut short: a1 %q, b2 %q", a, b)
	}
	sqlIn(t, dbB, "drop trigger refuse_key on data_key_versions")
	if out := g.mustRun("datakey", "rotate"); !strings.Contains(out, "data key version 1 is now in every cell") {
		t.Fatalf("rotate again:\n%s", out)
	}
	if a, b := wrapped(dbA), wrapped(dbB); a != b || strings.Count(a, ":") != 1 {
		t.Fatalf("after the rotation finished: a1 %q, b2 %q; want version 1 alike", a, b)
	}
	if out := g.mustRun("datakey", "rotate"); !strings.Contains(out, "data key version 2 added in every cell") ||
		strings.Count(out, "re-seal: 2 sealed values under an older version") != 2 {
		t.Fatalf("rotate:\n%s", out)
	}
	if a, b := wrapped(dbA), wrapped(dbB); a != b || strings.Count(a, ":") != 2 {
		t.Fatalf("after the second rotation: a1 %q, b2 %q; want versions 1 and 2 alike", a, b)
	}
	out := g.mustRun("datakey", "reseal")
	for _, want := range []string{"cell a1: re-sealed 2 values under version 2", "cell b2: re-sealed 2 values under version 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("reseal does not say %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "re-seal: 0 sealed values under an older version") != 2 {
		t.Errorf("reseal left values under an older version:\n%s", out)
	}

	key, err := app.ReadDataKeyFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "data.key"))
	if err != nil {
		t.Fatal(err)
	}
	alone, err := merchant.NewSealer(key) // version 0 only: the old key
	if err != nil {
		t.Fatal(err)
	}
	for cell, url := range map[string]string{"a1": dbA, "b2": dbB} {
		db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ring, err := merchant.OpenKeyring(ctx, db, key, "test")
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			ShopNo string `bun:"shop_no"`
			Sealed []byte `bun:"private_key_sealed"`
		}
		if err := db.NewRaw("select shop_no, private_key_sealed from merchants").Scan(ctx, &rows); err != nil || len(rows) != 1 {
			t.Fatalf("cell %s: %d merchants, %v", cell, len(rows), err)
		}
		for _, r := range rows {
			if v := merchant.SealedVersion(r.Sealed); v != 2 {
				t.Errorf("cell %s: %s's key sealed under version %d, want 2", cell, r.ShopNo, v)
			}
			if _, err := ring.OpenSigningKey(r.Sealed, r.ShopNo); err != nil {
				t.Errorf("cell %s: %s's key does not open with the cell's keyring: %v", cell, r.ShopNo, err)
			}
			if _, err := alone.OpenSigningKey(r.Sealed, r.ShopNo); err == nil {
				t.Errorf("cell %s: %s's key opens with the old key", cell, r.ShopNo)
			}
		}
	}

	// b2 bound to another key: serve and the commands are refused, exit 2,
	// naming b2.
	bound := queryIn(t, dbB, "select fingerprint from data_key_binding")
	sqlIn(t, dbB, "update data_key_binding set fingerprint = $1", merchant.KeyFingerprint([]byte(strings.Repeat("k", 32))))
	for _, args := range [][]string{{"serve"}, {"datakey", "status"}, {"datakey", "rotate"}} {
		r := g.run(args...)
		if r.code() != 2 || r.err == nil || !strings.Contains(r.err.Error(), "cell b2") || !strings.Contains(r.err.Error(), "data key refused") {
			t.Errorf("%v with b2 bound to another key: exit %d, %v; want 2 naming cell b2", args, r.code(), r.err)
		}
	}
	if a, b := wrapped(dbA), wrapped(dbB); a != b || strings.Count(a, ":") != 2 {
		t.Errorf("a refused rotation changed a cell: a1 %q, b2 %q", a, b)
	}
	sqlIn(t, dbB, "update data_key_binding set fingerprint = $1", bound)
	g.mustRun("audit", "verify")
}

// serve over two cells re-seals both in the background after a rotation
// made by another process (before, the home cell's alone). Not parallel:
// it shortens the re-seal's period before any parallel test runs a serve.
func TestServeResealsEveryCell(t *testing.T) {
	defer func(d time.Duration) { resealEvery = d }(resealEvery)
	resealEvery = 50 * time.Millisecond
	g, _, _ := cellsGateway(t)
	g.mustRun("cells", "init")
	for _, cell := range []string{"a1", "b2"} {
		g.mustRun("merchant", "create", "--name", "Resealed "+cell, "--currencies", "USD", "--cell", cell)
	}
	s := g.serve()
	// serve may re-seal a cell before rotate prints its status: only
	// the version is asserted here.
	if out := g.mustRun("datakey", "rotate"); !strings.Contains(out, "data key version 1 added in every cell") {
		t.Fatalf("rotate:\n%s", out)
	}
	deadline := time.Now().Add(commandTimeout)
	for {
		out := g.mustRun("datakey", "status")
		if strings.Count(out, "re-seal: 0 sealed values") == 2 && strings.Count(out, "current: 2 sealed values") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not re-seal every cell within %s:\n%s\n%s", commandTimeout, out, s.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.mustStop()
}
