package app

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// pageShop finds the merchant of an operator's or auditor's page in its
// URL, and none in a page of no one merchant.
func TestPageShop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, want string }{
		{"/operator/merchants/SH2000000001", "SH2000000001"},
		{"/operator/merchants/SH2000000001/whitelist", "SH2000000001"},
		{"/operator/merchants/SH2000000001/deposit/confirm", "SH2000000001"},
		{"/audit/journal/SH2000000001/7", "SH2000000001"},
		{"/audit/journal?shopNo=SH2000000001&from=51", "SH2000000001"},
		{"/audit/statement?shopNo=SH2000000001&startDate=2026-01-01&endDate=2026-01-31", "SH2000000001"},
		{"/house/adjustments?shopNo=SH2000000001&done=proposed", "SH2000000001"},
		{"/house/adjustments", ""},
		{"/operator/merchants", ""},
		{"/operator/merchants?after=5", ""},
		{"/operator/merchants/", ""},
		{"/audit/journal", ""},
		{"/operator/holds?shopNo=SH2000000001", ""}, // no page of one merchant
		{"/balances", ""},
	} {
		if got := pageShop(httptest.NewRequest("GET", tc.target, nil)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
}

// FuzzFormShop: whatever the sign-in's body, the router's reading of its
// shop number never fails, and the console then reads the body whole.
func FuzzFormShop(f *testing.F) {
	f.Add(url.Values{"csrf": {"x"}, "shopNo": {" SH2000000001 "}, "login": {"adm"}}.Encode())
	f.Add("shopNo=%zz&shopNo=SH1")
	f.Add(strings.Repeat("a", formBytesMax+10))
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
		shop := formShop(r)
		got, err := io.ReadAll(r.Body)
		if err != nil || string(got) != body {
			t.Fatalf("the body read again: %v, %d bytes of %d", err, len(got), len(body))
		}
		if len(body) > formBytesMax && shop != "" {
			t.Fatalf("a body past the bound gave a shop number %q", shop)
		}
		// The shop number the console reads from the same form.
		c := httptest.NewRequest("POST", "/login", strings.NewReader(body))
		c.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if want := strings.TrimSpace(c.PostFormValue("shopNo")); len(body) <= formBytesMax && shop != want {
			t.Fatalf("shop %q, the console reads %q", shop, want)
		}
	})
}

// FuzzUploadShop: whatever an upload's body, the router's reading of its
// shopNo field never fails, the console then reads the body whole, and a
// well-formed upload's field is found.
func FuzzUploadShop(f *testing.F) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", "x")
	_ = mw.WriteField("shopNo", " SH2000000001 ")
	fw, _ := mw.CreateFormFile("file", "s.csv")
	_, _ = fw.Write([]byte("value_date,amount,currency,reference\n"))
	_ = mw.Close()
	f.Add(buf.String(), mw.FormDataContentType())
	f.Add("--b\r\nContent-Disposition: form-data; name=\"shopNo\"\r\n\r\nSH1", "multipart/form-data; boundary=b")
	f.Add("shopNo=SH1", "application/x-www-form-urlencoded")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		r := httptest.NewRequest("POST", "/audit/bank", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		shop := uploadShop(r)
		got, err := io.ReadAll(r.Body)
		if err != nil || string(got) != body {
			t.Fatalf("the body read again: %v, %d bytes of %d", err, len(got), len(body))
		}
		if body == buf.String() && shop != "SH2000000001" {
			t.Fatalf("the seed's shop number: %q", shop)
		}
	})
}

// countingReader counts what is read of it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// The router reads an upload only up to its shopNo field, which the
// console's form puts before the file: a 4 MiB statement is not held by
// the router (before any authentication) to route it; the console still
// reads the body whole.
func TestUploadShopStopsAtTheField(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", "x")
	_ = mw.WriteField("shopNo", "SH2000000001")
	fw, _ := mw.CreateFormFile("file", "s.csv")
	_, _ = fw.Write(bytes.Repeat([]byte("2026-11-27,1.00,USD,REF\n"), 4<<20/24))
	_ = mw.Close()
	body := buf.String()
	src := &countingReader{r: strings.NewReader(body)}
	r := httptest.NewRequest("POST", "/audit/bank", src)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	if shop := uploadShop(r); shop != "SH2000000001" {
		t.Fatalf("shop %q", shop)
	}
	if src.n > 64<<10 {
		t.Errorf("the router read %d bytes of a %d-byte upload to find its shop number", src.n, len(body))
	}
	if got, err := io.ReadAll(r.Body); err != nil || string(got) != body {
		t.Fatalf("the body read again: %v, %d bytes of %d", err, len(got), len(body))
	}
}
