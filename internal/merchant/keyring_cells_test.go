package merchant_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger/pgtest"
)

// A key version made once is added to two databases (two cells) alike:
// the same wrapped key in both, sealing under it in each; adding it again
// changes nothing (a rotation resumed); another key under the same number,
// or one wrapped under another data key, is refused and changes nothing.
func TestAddVersionToCells(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := randomKey(t)
	dbA, dbB := pgtest.NewDB(t), pgtest.NewDB(t)
	ringA, err := merchant.OpenKeyring(ctx, dbA, key, "test")
	if err != nil {
		t.Fatal(err)
	}
	ringB, err := merchant.OpenKeyring(ctx, dbB, key, "test")
	if err != nil {
		t.Fatal(err)
	}
	other, err := merchant.NewSealer(randomKey(t))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := ringA.NewVersion(1)
	if err != nil {
		t.Fatal(err)
	}
	v1again, _ := ringA.NewVersion(1) // the same number, another key
	foreign, _ := other.NewVersion(1)
	for _, tc := range []struct {
		name      string
		ring      *merchant.Sealer
		kv        merchant.KeyVersion
		wantAdded bool
		wantErr   func(error) bool
	}{
		{name: "into a1", ring: ringA, kv: v1, wantAdded: true},
		{name: "into b2", ring: ringB, kv: v1, wantAdded: true},
		{name: "into a1 again", ring: ringA, kv: v1},
		{name: "another key as version 1", ring: ringB, kv: v1again, wantErr: func(err error) bool { return errors.Is(err, merchant.ErrOtherVersion) }},
		{name: "wrapped under another data key", ring: ringB, kv: foreign, wantErr: func(err error) bool {
			var k *merchant.DataKeyError
			return errors.As(err, &k)
		}},
	} {
		db := dbA
		if tc.ring == ringB {
			db = dbB
		}
		added, err := tc.ring.AddVersion(ctx, db, tc.kv)
		if tc.wantErr != nil {
			if err == nil || !tc.wantErr(err) {
				t.Errorf("%s: %v, want a refusal", tc.name, err)
			}
			continue
		}
		if err != nil || added != tc.wantAdded {
			t.Errorf("%s: added %v, %v; want %v", tc.name, added, err, tc.wantAdded)
		}
	}
	va, err := merchant.KeyVersions(ctx, dbA)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := merchant.KeyVersions(ctx, dbB)
	if err != nil {
		t.Fatal(err)
	}
	if len(va) != 1 || len(vb) != 1 || string(va[0].Wrapped) != string(vb[0].Wrapped) || string(va[0].Wrapped) != string(v1.Wrapped) {
		t.Errorf("versions a1 %+v, b2 %+v; want version 1 alike", va, vb)
	}
	// Each seals under it, and what one seals the other opens.
	sealed := ringA.Seal([]byte("secret"), "ctx")
	if merchant.SealedVersion(sealed) != 1 || ringB.CurrentVersion() != 1 {
		t.Fatalf("sealing under version %d in a1, %d in b2", merchant.SealedVersion(sealed), ringB.CurrentVersion())
	}
	if plain, err := ringB.Open(sealed, "ctx"); err != nil || string(plain) != "secret" {
		t.Errorf("b2 opens a1's value: %q %v", plain, err)
	}
}
