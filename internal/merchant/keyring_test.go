package merchant_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/console"
	"github.com/paygate/gateway/internal/gatewaytest"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgtest"
)

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, merchant.DataKeyBytes)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// The first key that opens a database binds it; any other is refused with
// both fingerprints named, and an unbound database that already holds
// sealed values is bound only by the key that opens them (issue 31, 2).
func TestDataKeyBinding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keyA, keyB := randomKey(t), randomKey(t)
	fpA, fpB := merchant.KeyFingerprint(keyA), merchant.KeyFingerprint(keyB)
	for _, tt := range []struct {
		name     string
		existing []byte // a merchant sealed under this key before any binding
		first    []byte // the key of the first start, which binds
		then     []byte
		refused  bool
		expected string // the refusal's fingerprints
		found    string
	}{
		{name: "same key again", first: keyA, then: keyA},
		{name: "another key", first: keyA, then: keyB, refused: true, expected: fpA, found: fpB},
		{name: "upgrade, the key of the sealed values", existing: keyA, then: keyA},
		{name: "upgrade, another key", existing: keyA, then: keyB, refused: true, found: fpB},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := pgtest.NewDB(t)
			if tt.existing != nil {
				s, err := merchant.NewSealer(tt.existing)
				if err != nil {
					t.Fatal(err)
				}
				gatewaytest.Merchant(t, gatewaytest.New(t, db, gatewaytest.Options{Sealer: s}), "USD")
			}
			if tt.first != nil {
				if _, err := merchant.OpenKeyring(ctx, db, tt.first, "test"); err != nil {
					t.Fatal(err)
				}
			}
			_, err := merchant.OpenKeyring(ctx, db, tt.then, "test")
			var ke *merchant.DataKeyError
			if !tt.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if fp, _ := merchant.BoundFingerprint(ctx, db); fp != merchant.KeyFingerprint(tt.then) {
					t.Fatalf("bound to %q, want %q", fp, merchant.KeyFingerprint(tt.then))
				}
				return
			}
			if !errors.As(err, &ke) || ke.Expected != tt.expected || ke.Found != tt.found ||
				!strings.Contains(err.Error(), tt.found) || !strings.Contains(err.Error(), tt.expected) {
				t.Fatalf("got %v, want a DataKeyError expecting %q, finding %q", err, tt.expected, tt.found)
			}
			for _, k := range [][]byte{keyA, keyB} {
				if bytes.Contains([]byte(err.Error()), k) || strings.Contains(err.Error(), string(k)) {
					t.Fatal("the refusal shows a key")
				}
			}
		})
	}
}

// A rotation adds a version that new values are sealed under; the re-seal
// moves every sealed column's values to it (each opened with the context
// its owning package seals with, so a wrong one fails here); a process
// started before the rotation still opens the new values; a version is
// retired once nothing needs it, and the values stay readable by a process
// that starts afterwards.
func TestDataKeyRotateAndReseal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDB(t)
	key := randomKey(t)
	s, err := merchant.OpenKeyring(ctx, db, key, "test")
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.New(t, db, gatewaytest.Options{Sealer: s})
	fill := func(login string) {
		m := gatewaytest.Merchant(t, g, "USD")
		gatewaytest.Deposit(t, g.Ledger, m.ID, "USD", 100_00)
		if _, err := g.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10_00}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Deliveries.RollWebhookSecret(ctx, m.ID, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := g.RollSigningKey(ctx, m.ID, time.Hour, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := console.CreateUser(ctx, db, s, console.NewUser{Login: login, Role: console.RoleOperator, Password: "a long enough password 1"}); err != nil {
			t.Fatal(err)
		}
	}
	fill("olga.one")
	stale, err := merchant.OpenKeyring(ctx, db, key, "test") // a gateway started before the rotation
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Rotate(ctx, db)
	if err != nil || v != 1 {
		t.Fatalf("rotate: %d %v", v, err)
	}
	fill("olga.two")
	st := status(t, s, db)
	if st[0] == 0 || st[1] == 0 {
		t.Fatalf("before the re-seal, want values under versions 0 and 1: %v", st)
	}
	if _, err := stale.Reseal(ctx, db); err != nil { // stale: its current is 0, nothing to move
		t.Fatal(err)
	}
	n, err := s.Reseal(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if st := status(t, s, db); st[0] != 0 || int(st[1]) < n || n == 0 {
		t.Fatalf("after re-sealing %d: %v", n, st)
	}
	// The stale process opens what the new version sealed.
	checkOpen(t, db, stale)
	if v, err = s.Rotate(ctx, db); err != nil || v != 2 {
		t.Fatalf("second rotate: %d %v", v, err)
	}
	if _, err := s.Reseal(ctx, db); err != nil {
		t.Fatal(err)
	}
	if retired, err := s.RetireUnused(ctx, db, merchant.RetireAfter); err != nil || len(retired) != 0 {
		t.Fatalf("retired %v (%v) before the overlap ended", retired, err)
	}
	if retired, err := s.RetireUnused(ctx, db, 0); err != nil || len(retired) != 1 || retired[0] != 1 {
		t.Fatalf("retired %v (%v), want [1]", retired, err)
	}
	later, err := merchant.OpenKeyring(ctx, db, key, "test")
	if err != nil {
		t.Fatal(err)
	}
	if later.CurrentVersion() != 2 {
		t.Fatalf("a new process seals under %d, want 2", later.CurrentVersion())
	}
	checkOpen(t, db, later)
}

func status(t *testing.T, s *merchant.Sealer, db *bun.DB) map[int]int64 {
	t.Helper()
	st, err := s.KeyStatus(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for _, v := range st {
		out[v.Version] = v.Rows
	}
	return out
}

// checkOpen opens every merchant's signing keys with s.
func checkOpen(t *testing.T, db *bun.DB, s *merchant.Sealer) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "select shop_no, private_key_sealed from merchants")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var shop string
		var sealed []byte
		if err := rows.Scan(&shop, &sealed); err != nil {
			t.Fatal(err)
		}
		if _, err := s.OpenSigningKey(sealed, shop); err != nil {
			t.Fatalf("%s (version %d): %v", shop, merchant.SealedVersion(sealed), err)
		}
	}
}
