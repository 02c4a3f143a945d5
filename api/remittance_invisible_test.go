package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/remittance"
)

// TestScreeningInvisibleLettersAndSmallCapitals (issue 27, point 1): end to
// end through POST /shop/remittance/create and the lifecycle worker. A name
// holding a default-ignorable code point (the Hangul fillers, which are
// letters that show as nothing, and the rest of the class) is refused at
// the door, 400 naming beneficiary.name, and moves no money; a listed name
// in small capitals, with a modifier letter as its separator or in
// superscripts is REJECTED as the listed name, amount and fee back.
func TestScreeningInvisibleLettersAndSmallCapitals(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, serverOptions{})
	ctx := context.Background()
	if _, err := s.l.Remit.ReplaceSanctions(ctx, []remittance.SanctionsEntry{{Name: "Ivan Petrov", List: "TEST", Ref: "27"}}); err != nil {
		t.Fatal(err)
	}
	sh := s.newShop(merchant.Spec{Currencies: []string{"EUR"}})
	s.deposit(sh, "EUR", 100000)
	ben := func(name string) string {
		b, err := json.Marshal(name)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Replace(benDE, `"Hans Muster GmbH"`, string(b), 1)
	}

	for _, name := range []string{
		"Ivan\u3164Petrov", "Iv\u115Fan Petrov", "Ivan Petrov\uFFA0", "Iv\u1160an Petrov", // the issue's
		"Iv\u034Fan Petrov", "Ivan\uFE0F Petrov", "Ivan\U000E0041Petrov", "Iva\u180Bn Petrov", "Ivan Pe\u17B4trov",
		"Iv\u200Dan Petrov", "Iv\u00ADan Petrov", "Ivan\U0001BCA0Petrov",
	} {
		a := s.request(&sh, "POST", "/shop/remittance/create", remitBody(ben(name), `"100.00"`, "EUR", "")).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, "beneficiary.name: ") {
			t.Errorf("%+q: message %q does not name beneficiary.name", name, a.Message)
		}
	}
	if n := s.count(`select count(*) from remittances`); n != 0 {
		t.Fatalf("%d remittances recorded by refused requests", n)
	}

	w := s.remitWorker()
	variants := []string{
		"ɪᴠᴀɴ ᴘᴇᴛʀᴏᴠ",       // the small capitals
		"\uA7AEᴠᴀɴ ᴘᴇᴛʀᴏᴠ",  // capital small capital I
		"Ivan\u02CCPetrov",  // the modifier letter as a separator
		"Iv\u02CCan Petrov", // … and inside a word
		"Ivan\u02D0Petrov",  // another modifier letter
		"ᴵᵛᵃⁿ ᴾᵉᵗʳᵒᵛ",       // superscripts
	}
	ids := map[string]string{}
	for _, name := range append(variants, "Ivan Sidorov") {
		ids[name] = s.createRemittance(sh, remitBody(ben(name), `"100.00"`, "EUR", "")).TxID
	}
	s.settle(w)
	for _, name := range variants {
		q, a := s.queryRemittance(sh, ids[name])
		if q.Status != "REJECTED" || q.Reason != "sanctions screening: TEST:27 Ivan Petrov" {
			t.Errorf("%+q: %s", name, a.Data)
		}
	}
	if q, a := s.queryRemittance(sh, ids["Ivan Sidorov"]); q.Status == "REJECTED" {
		t.Errorf("a clean name was rejected: %s", a.Data)
	}
}
