package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

func TestDecimalExact(t *testing.T) {
	for _, s := range []string{"0", "0.00", "12.50", "-12.50", "1500", "1e2", "-0.01", "0.000000000000000001",
		"123456789012345678901234567890.12", "1E-7"} {
		d, err := ParseDecimal(s)
		if err != nil {
			t.Fatalf("ParseDecimal(%q): %v", s, err)
		}
		b, err := json.Marshal(struct {
			A Decimal `json:"a"`
		}{d})
		if err != nil || string(b) != `{"a":`+s+`}` {
			t.Errorf("%q marshals as %s %v", s, b, err)
		}
		var back struct {
			A Decimal `json:"a"`
		}
		if err := json.Unmarshal(b, &back); err != nil || back.A.String() != s {
			t.Errorf("%q reads back as %q %v", s, back.A, err)
		}
		x, err := d.Apd()
		want, _, _ := apd.NewFromString(s)
		if err != nil || x.Cmp(want) != 0 {
			t.Errorf("%q Apd %v %v", s, x, err)
		}
	}
	for _, s := range []string{"", "1.", ".5", "01", "+1", "1,00", "NaN", "Infinity", "0x10", " 1", "1e", "١٢", strings.Repeat("9", 65)} {
		if _, err := ParseDecimal(s); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", s)
		}
	}
	// A string holding a number reads too (old callbacks' fxRate); other
	// JSON does not.
	var d Decimal
	if err := json.Unmarshal([]byte(`"1.0825"`), &d); err != nil || d.String() != "1.0825" {
		t.Errorf("string: %q %v", d, err)
	}
	for _, bad := range []string{`true`, `"abc"`, `{}`, `[1]`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// Unset never goes out as a number.
	if _, err := json.Marshal(TransferRequest{CardNo: "crd_1"}); err == nil {
		t.Error("a request with an unset amount was encoded")
	}
	c, err := New(Config{BaseURL: "https://127.0.0.1:1", ShopNo: "SH1", PublicKey: "pk"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Transfer(context.Background(), TransferRequest{CardNo: "crd_1", Currency: "USD", Direction: DirectionIn})
	var e *Error
	if !errors.As(err, &e) || e.Attempts != 0 || e.Temporary() || e.IdempotencyKey == "" {
		t.Errorf("unset amount: %#v, want an error before any attempt, not temporary", err)
	}
	if MustDecimal("12.5").Cmp(MustDecimal("12.50")) != 0 || MustDecimal("-1").Cmp(MustDecimal("0.00")) != -1 {
		t.Error("Cmp")
	}
	x, _, _ := apd.NewFromString("1.10")
	if DecimalFromApd(x).String() != "1.10" {
		t.Error("DecimalFromApd")
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"12.50", "-0", "1e-5", "00", "1.2.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		if err != nil {
			return
		}
		// Whatever it accepts is a JSON number apd reads exactly, and
		// survives a round trip unchanged.
		var n json.Number
		if err := json.Unmarshal([]byte(s), &n); err != nil {
			t.Fatalf("%q accepted but not a JSON number: %v", s, err)
		}
		if _, err := d.Apd(); err != nil {
			t.Fatalf("%q accepted but apd refuses it: %v", s, err)
		}
		b, _ := json.Marshal(d)
		var back Decimal
		if err := json.Unmarshal(b, &back); err != nil || back != d {
			t.Fatalf("%q round trip: %q %v", s, back, err)
		}
	})
}

func TestBeneficiaryFlat(t *testing.T) {
	b := Beneficiary{Name: "Acme", Country: "GB", AccountNo: "12345678", Extra: map[string]string{"sort_code": "200000"}}
	raw, err := json.Marshal(b)
	if err != nil || string(raw) != `{"account_no":"12345678","country":"GB","name":"Acme","sort_code":"200000"}` {
		t.Fatalf("%s %v", raw, err)
	}
	var back Beneficiary
	if err := json.Unmarshal(raw, &back); err != nil || back.Extra["sort_code"] != "200000" || back.Name != "Acme" || back.BankSwift != "" {
		t.Errorf("%+v %v", back, err)
	}
	if _, err := json.Marshal(Beneficiary{Name: "A", Country: "DE", Extra: map[string]string{"name": "B"}}); err == nil {
		t.Error("Extra repeating name was encoded")
	}
}
