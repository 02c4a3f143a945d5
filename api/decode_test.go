package api

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/postings"
)

func TestDecodeCardCreate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    cards.CreateCardInput
		wantErr string // the envelope message
	}{
		{give: `{"bin":"453201","currency":"USD","amount":100}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10000}},
		{give: `{"bin":"453201","currency":"USD","amount":"12.5"}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1250}},
		{give: `{"bin":"453201","currency":"USD","amount":1e2}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 10000}},
		{give: `{"bin":"453201","currency":"USD","amount":0}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD"}},
		{give: `{"bin":"453201","currency":"USD","amount":"-0"}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD"}},
		{give: `{"bin":"453201","currency":"JPY","amount":"1500"}`, want: cards.CreateCardInput{Bin: "453201", Currency: "JPY", Amount: 1500}},
		{give: ` {"remark":"é","bin":"45320111","currency":"EUR","amount":1.50,"callback_url":"https://a.example.com/cb?x=1"} `,
			want: cards.CreateCardInput{Bin: "45320111", Currency: "EUR", Amount: 150, Remark: "é", CallbackURL: "https://a.example.com/cb?x=1"}},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":null}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100}},

		{give: ``, wantErr: "body: is required: a JSON object"},
		{give: `[]`, wantErr: "body: must be a JSON object"},
		{give: `"x"`, wantErr: "body: must be a JSON object"},
		{give: `{"bin":"453201","currency":"USD","amount":1}{}`, wantErr: "body: has data after the JSON object"},
		{give: `{"bin":"453201","currency":"USD","amount":1} x`, wantErr: "body: has data after the JSON object"},
		{give: `{"bin":"453201",`, wantErr: "body: is not valid JSON (unexpected end)"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"colour":"red"}`, wantErr: "colour: is not a known field"},
		{give: `{"Bin":"453201","currency":"USD","amount":1}`, wantErr: "Bin: is not a known field"},
		{give: `{"bin":"453201","bin":"453202","currency":"USD","amount":1}`, wantErr: "bin: appears more than once"},
		{give: `{"bin":453201,"currency":"USD","amount":1}`, wantErr: "bin: must be a string"},
		{give: `{"bin":"453201","currency":["USD"],"amount":1}`, wantErr: "currency: must be a string"},
		{give: `{"bin":"453201","currency":"USD","amount":true}`, wantErr: "amount: must be a number or a string holding a decimal number"},
		{give: `{"bin":"453201","currency":"USD","amount":{"v":1}}`, wantErr: "amount: must be a number or a string holding a decimal number"},
		{give: `{"currency":"USD"}`, wantErr: "bin, amount: are required"},
		{give: `{"bin":null,"currency":"USD","amount":1}`, wantErr: "bin: is required"},
		{give: `{}`, wantErr: "bin, currency, amount: are required"},
		{give: `{"bin":"4532","currency":"USD","amount":1}`, wantErr: "bin: must be 6 to 8 digits"},
		{give: `{"bin":"45320a","currency":"USD","amount":1}`, wantErr: "bin: must be 6 to 8 digits"},
		{give: `{"bin":"453201","currency":"usd","amount":1}`, wantErr: "currency: must be a three-letter upper-case ISO 4217 code"},
		{give: `{"bin":"453201","currency":"USDT","amount":1}`, wantErr: "currency: must be a three-letter upper-case ISO 4217 code"},
		{give: `{"bin":"453201","currency":"XYZ","amount":1}`, wantErr: `currency: "XYZ" is not a supported ISO 4217 currency code`},
		{give: `{"bin":"453201","currency":"USD","amount":"1.005"}`, wantErr: "amount: USD allows at most 2 decimals"},
		{give: `{"bin":"453201","currency":"JPY","amount":1.5}`, wantErr: "amount: JPY has no decimals"},
		{give: `{"bin":"453201","currency":"USD","amount":-1}`, wantErr: "amount: must not be negative"},
		{give: `{"bin":"453201","currency":"USD","amount":"1,00"}`, wantErr: `amount: "1,00" is not a decimal number`},
		{give: `{"bin":"453201","currency":"USD","amount":" 1"}`, wantErr: `amount: " 1" is not a decimal number`},
		{give: `{"bin":"453201","currency":"USD","amount":"NaN"}`, wantErr: `amount: "NaN" is not a decimal number`},
		{give: `{"bin":"453201","currency":"USD","amount":1e400}`, wantErr: "amount: exceeds the maximum of 10000000000000.00 USD"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"` + strings.Repeat("é", 256) + `"}`, wantErr: "remark: is longer than 255 characters"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"a\u0000b"}`, wantErr: "remark: must not contain control characters (U+0000 at character 2)"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"tab\there"}`, wantErr: "remark: must not contain control characters (U+0009 at character 4)"},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":1,\"remark\":\"c1\u0085\"}", wantErr: "remark: must not contain control characters (U+0085 at character 3)"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\u202egnp.exe"}`, wantErr: "remark: must not contain bidirectional formatting characters (U+202E at character 1)"},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":1,\"remark\":\"x\u2067\"}", wantErr: "remark: must not contain bidirectional formatting characters (U+2067 at character 2)"},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":1,\"remark\":\"bad \xff\"}", wantErr: invalidUTF8("remark")},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":1,\"remark\":\"bad \xc3\x28\"}", wantErr: invalidUTF8("remark")},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":1,\"remark\":\"\xed\xa0\x80\"}", wantErr: invalidUTF8("remark")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\ud800"}`, wantErr: invalidUTF8("remark")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\udc00\ud800"}`, wantErr: invalidUTF8("remark")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\ud83d x"}`, wantErr: invalidUTF8("remark")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\ud83d\u0041"}`, wantErr: invalidUTF8("remark")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\ufffd"}`, wantErr: "remark: must not contain the replacement character (U+FFFD at character 1)"},
		{give: "{\"bin\":\"\xff453201\",\"currency\":\"USD\",\"amount\":1}", wantErr: invalidUTF8("bin")},
		{give: "{\"bin\":\"453201\",\"currency\":\"USD\",\"amount\":\"1\xff\"}", wantErr: invalidUTF8("amount")},
		{give: "{\"b\xffin\":\"453201\",\"currency\":\"USD\",\"amount\":1}", wantErr: invalidUTF8("body")},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\\ud800"}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100, Remark: `\ud800`}},
		{give: `{"bin":"453201","currency":"USD","amount":1,"remark":"\ud83d\udcb3 \u00e9"}`, want: cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 100, Remark: "💳 é"}},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"ftp://x.example/"}`, wantErr: "callback_url: must be an absolute URL with scheme http or https"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"/relative"}`, wantErr: "callback_url: must be an absolute URL with scheme http or https"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"https://u:p@x.example/"}`, wantErr: "callback_url: must not contain user info (a name or secret before @)"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"https://x.example.com/` + strings.Repeat("a", 2048) + `"}`, wantErr: "callback_url: is longer than 2048 bytes"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"http://127.0.0.1:8080/cb"}`, wantErr: "callback_url: names 127.0.0.1, a loopback address, which callbacks may not reach"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"http://localhost/cb"}`, wantErr: "callback_url: names localhost, a loopback address, which callbacks may not reach"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"http://169.254.169.254/latest/meta-data"}`, wantErr: "callback_url: names 169.254.169.254, a cloud metadata address, which callbacks may not reach"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"http://10.1.2.3/cb"}`, wantErr: "callback_url: names 10.1.2.3, a private address, which callbacks may not reach"},
		{give: `{"bin":"453201","currency":"USD","amount":1,"callback_url":"https://x.example.com:70000/cb"}`, wantErr: "callback_url: has a port out of range (1 to 65535)"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := decodeCardCreate([]byte(tt.give), callbackurl.AllowList{})
			if tt.wantErr != "" {
				if msg := messageOf(err); msg != tt.wantErr {
					t.Fatalf("error %q, want %q", msg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// messageOf is the envelope message of a decoder error, which must be a
// 400.
// invalidUTF8 is the message of a string whose bytes are not UTF-8.
func invalidUTF8(field string) string {
	return field + `: must be valid UTF-8 (no invalid byte, no unpaired surrogate escape such as \ud800)`
}

func messageOf(err error) string {
	if err == nil {
		return "<nil>"
	}
	e, o := classify(err)
	if o.status != 400 {
		return "not a 400: " + err.Error()
	}
	return errorMessage(e, o)
}

func TestDecodeTransfer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    cards.TransferInput
		wantErr string
	}{
		{give: `{"cardNo":"crd_1","amount":"10.25","currency":"EUR","direction":"IN"}`, want: cards.TransferInput{CardNo: "crd_1", Amount: 1025, Currency: "EUR", Direction: "IN"}},
		{give: `{"direction":"OUT","currency":"USD","amount":3,"cardNo":"crd_1"}`, want: cards.TransferInput{CardNo: "crd_1", Amount: 300, Currency: "USD", Direction: "OUT"}},
		{give: `{"cardNo":"crd_1","amount":0,"currency":"EUR","direction":"IN"}`, wantErr: "amount: must be greater than zero"},
		{give: `{"cardNo":"crd_1","amount":-5,"currency":"EUR","direction":"IN"}`, wantErr: "amount: must be positive"},
		{give: `{"cardNo":"crd_1","amount":1,"currency":"EUR","direction":"in"}`, wantErr: "direction: must be IN or OUT"},
		{give: `{"cardNo":"crd 1","amount":1,"currency":"EUR","direction":"IN"}`, wantErr: "cardNo: must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'"},
		{give: `{"cardNo":"","amount":1,"currency":"EUR","direction":"IN"}`, wantErr: "cardNo: must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'"},
		{give: `{"cardNo":"` + strings.Repeat("c", 65) + `","amount":1,"currency":"EUR","direction":"IN"}`, wantErr: "cardNo: must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'"},
		{give: `{"cardNo":"crd_1","amount":1,"currency":"EUR"}`, wantErr: "direction: is required"},
		{give: `{"cardNo":"crd_1","amount":1,"currency":"EUR","direction":"IN","fee":1}`, wantErr: "fee: is not a known field"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := decodeTransfer([]byte(tt.give))
			if tt.wantErr != "" {
				if msg := messageOf(err); msg != tt.wantErr {
					t.Fatalf("error %q, want %q", msg, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestDecodeCardNosAndCardRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, wantErr string
		decode              func([]byte) error
	}{
		{"batch ok", `{"cardNos":["a","b","a"]}`, "", batchOnly},
		{"batch empty", `{"cardNos":[]}`, "cardNos: must list 1 to 100 card numbers", batchOnly},
		{"batch not an array", `{"cardNos":"a"}`, "cardNos: must be an array of strings", batchOnly},
		{"batch number entry", `{"cardNos":["a",1]}`, "cardNos: must be an array of strings", batchOnly},
		{"batch nested", `{"cardNos":[["a"]]}`, "cardNos: must be an array of strings", batchOnly},
		{"batch bad entry", `{"cardNos":["a","b c"]}`, "cardNos[1]: must be 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'", batchOnly},
		{"batch missing", `{"cards":["a"]}`, "cards: is not a known field", batchOnly},
		{"freeze ok", `{"cardNo":"crd_1","reason":"lost"}`, "", freezeOnly},
		{"freeze long reason", `{"cardNo":"crd_1","reason":"` + strings.Repeat("r", 256) + `"}`, "reason: is longer than 255 characters", freezeOnly},
		{"unfreeze takes no reason", `{"cardNo":"crd_1","reason":"x"}`, "reason: is not a known field", unfreezeOnly},
		{"unfreeze missing cardNo", `{}`, "cardNo: is required", unfreezeOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode([]byte(tt.give))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if msg := messageOf(err); msg != tt.wantErr {
				t.Fatalf("error %q, want %q", msg, tt.wantErr)
			}
		})
	}
}

func batchOnly(b []byte) error    { _, err := decodeCardNos(b); return err }
func freezeOnly(b []byte) error   { _, err := decodeCardRequest(b, true); return err }
func unfreezeOnly(b []byte) error { _, err := decodeCardRequest(b, false); return err }

// FuzzDecoders feeds arbitrary bodies to every request decoder. None may
// panic; every refusal is a 400 that names a field; what one accepts
// satisfies the request's rules and decodes the same once re-encoded.
func FuzzDecoders(f *testing.F) {
	for _, seed := range []string{
		`{"bin":"453201","currency":"USD","amount":100}`,
		`{"bin":"453201","currency":"USD","amount":"12.50","remark":"x","callback_url":"https://a.example.com/"}`,
		`{"bin":"453201","currency":"JPY","amount":1e3}`,
		`{"cardNo":"crd_1","amount":"0.01","currency":"EUR","direction":"IN"}`,
		`{"cardNos":["crd_1","crd_2"]}`,
		`{"cardNo":"crd_1","reason":"lost"}`,
		`{"bin":"1","bin":"2"}`,
		`{"amount":-0.0e-7}`,
		`{"a":[{"b":[1,2,{"c":null}]}]}`,
		`{"cardNos":[` + strings.Repeat(`"x",`, 100) + `"x"]}`,
		"{\"remark\":\"\xff\"}",
		``, `null`, `[`, `{"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		check400 := func(err error) {
			t.Helper()
			e, o := classify(err)
			if o.status != 400 || e.Field == "" || errorMessage(e, o) == "" {
				t.Fatalf("refusal is not a 400 naming a field: %#v", err)
			}
		}
		if in, err := decodeCardCreate(raw, callbackurl.AllowList{}); err != nil {
			check400(err)
		} else {
			cur, cerr := postings.LookupCurrency(in.Currency)
			if cerr != nil || in.Amount < 0 || in.Amount > postings.AmountMinorMax || checkBIN("bin", in.Bin) != nil ||
				utf8.RuneCountInString(in.Remark) > remarkCharsMax {
				t.Fatalf("accepted %+v", in)
			}
			again, _ := json.Marshal(map[string]any{"bin": in.Bin, "currency": in.Currency,
				"amount": postings.Money{Minor: in.Amount, Currency: cur}, "remark": in.Remark})
			back, err := decodeCardCreate(again, callbackurl.AllowList{})
			if err != nil || back.Amount != in.Amount || back.Bin != in.Bin || back.Remark != in.Remark {
				t.Fatalf("round trip %s: %+v, %v", again, back, err)
			}
		}
		if in, err := decodeTransfer(raw); err != nil {
			check400(err)
		} else if in.Amount <= 0 || !postings.IsRefText(in.CardNo) || (in.Direction != "IN" && in.Direction != "OUT") {
			t.Fatalf("accepted %+v", in)
		}
		if nos, err := decodeCardNos(raw); err != nil {
			check400(err)
		} else if len(nos) == 0 || len(nos) > cards.CardsMax {
			t.Fatalf("accepted %d card numbers", len(nos))
		}
		if req, err := decodeCardRequest(raw, true); err != nil {
			check400(err)
		} else if !postings.IsRefText(req.CardNo) || utf8.RuneCountInString(req.Reason) > reasonCharsMax {
			t.Fatalf("accepted %+v", req)
		}
	})
}
