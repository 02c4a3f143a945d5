package api

import (
	"fmt"
	"strings"
	"testing"
)

// hostileTexts are JSON string literals (quotes included, raw bytes as
// sent) of text every free-text field must refuse, with a word of the
// message.
var hostileTexts = []struct{ literal, want string }{
	{`"a\u0000b"`, "control characters (U+0000"},
	{`"line\nbreak"`, "control characters (U+000A"},
	{`"\u001b[31mred"`, "control characters (U+001B"},
	{`"del\u007f"`, "control characters (U+007F"},
	{`"next\u0085line"`, "control characters (U+0085"},
	{"\"c1\u009b31m\"", "control characters (U+009B"},
	{`"\u202egnp.exe"`, "bidirectional formatting characters (U+202E"},
	{`"x\u202a"`, "bidirectional formatting characters (U+202A"},
	{`"x\u2066y\u2069"`, "bidirectional formatting characters (U+2066"},
	{"\"x\u200fy\"", "bidirectional formatting characters (U+200F"},
	{`"zero\u200bwidth"`, "invisible format characters (U+200B"},
	{`"\ufeffbom"`, "invisible format characters (U+FEFF"},
	{`"para\u2029graph"`, "line or paragraph separators (U+2029"},
	{`"broken \ufffd"`, "replacement character (U+FFFD"},
	{"\"bad \xff\xfe\"", "must be valid UTF-8"},
	{"\"bad \xc3\x28\"", "must be valid UTF-8"},
	{"\"\xed\xa0\x80\"", "must be valid UTF-8"},
	{`"\ud800"`, "must be valid UTF-8"},
	{`"\udfff\ud800"`, "must be valid UTF-8"},
}

// Every free-text field of the API refuses control characters, bidi and
// invisible format characters, and invalid UTF-8 — also inside a JSON
// string, where encoding/json would have replaced it with U+FFFD — with a
// 400 naming the field, and nothing changes.
func TestFreeTextRefused(t *testing.T) {
	t.Parallel()
	n := newNetServer(t)
	sh := n.fundedShop()
	card := n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"20.00","remark":"kept"}`)
	before := n.journal()
	for _, h := range hostileTexts {
		for _, c := range []struct{ field, path, body string }{
			{"remark", "/shop/card/create", `{"bin":"453201","currency":"USD","amount":"1.00","remark":` + h.literal + `}`},
			{"reason", "/shop/card/freeze", fmt.Sprintf(`{"cardNo":%q,"reason":%s}`, card.CardNo, h.literal)},
			{"beneficiary.name", "/shop/remittance/create",
				remitBody(`{"name":`+h.literal+`,"country":"DE","bank_swift":"COBADEFFXXX","account_no":"DE89370400440532013000"}`, `"10.00"`, "EUR", "")},
		} {
			a := n.request(&sh, "POST", c.path, c.body).must(t, 400, 400)
			if !strings.HasPrefix(a.Message, c.field+": ") || !strings.Contains(a.Message, h.want) {
				t.Errorf("%s %s: message %q, want %s: …%s…", c.path, h.literal, a.Message, c.field, h.want)
			}
		}
		body := fmt.Sprintf(`{"messageId":%q,"cardNo":%q,"amount":"1.00","currency":"USD","merchantName":%s,"mcc":"5814","merchantCountry":"US"}`,
			n.msg(), card.CardNo, h.literal)
		a := n.call("POST", "/network/authorize", body).must(t, 400, 400)
		if !strings.HasPrefix(a.Message, "merchantName: ") || !strings.Contains(a.Message, h.want) {
			t.Errorf("authorize %s: message %q, want merchantName: …%s…", h.literal, a.Message, h.want)
		}
	}
	if after := n.journal(); after != before {
		t.Errorf("refused requests changed the journal:\n before %s\n after  %s", before, after)
	}
	// What people write is accepted: any script, emoji with their joiners.
	for _, ok := range []string{`"Müller & Söhne — 北京 — ℕ"`, `"👩\u200d💻 \ud83d\udcb3"`, `"می\u200cخواهم"`} {
		n.createCard(sh, `{"bin":"453201","currency":"USD","amount":"1.00","remark":`+ok+`}`)
	}
	if got := n.cardInfo(sh, card.CardNo); got.Remark != "kept" || got.Status != "ACTIVE" {
		t.Errorf("the card changed: %+v", got)
	}
}
