package app

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// The bank statement's reconciliation names its merchant in its upload
// (a multipart form: the file and the shopNo field): the router reads the
// field to send the upload to that merchant's cell, whose journal holds
// the deposits and whose records keep the reconciliation
// (docs/scaling.md, "The console over cells").

// bankStatementPath is internal/console/books' bank statement page.
const bankStatementPath = "/audit/bank"

// uploadBytesMax bounds what the router may read of an upload to find its
// shop number (a form with the field after the file): the console's bound
// of the file (8 MiB) and room for the form's other fields. A field not
// found within it sends the upload to the home cell, whose console refuses
// it under its bound.
const uploadBytesMax = 8<<20 + 64<<10

// shopNoFieldMax bounds the shop number field read (the console's is 64).
const shopNoFieldMax = 64

// uploadShop is the shopNo field of a multipart upload, trimmed as the
// console trims it; "" when there is none or the body is not one. It reads
// only up to that field (the console's form puts it before the file), so
// that a request not yet authenticated does not make the router hold the
// whole file, and it puts back exactly what it read.
func uploadShop(r *http.Request) string {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" || r.Body == nil {
		return ""
	}
	var read bytes.Buffer
	mr := multipart.NewReader(io.TeeReader(io.LimitReader(r.Body, uploadBytesMax), &read), params["boundary"])
	shop := ""
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FormName() == "shopNo" && p.FileName() == "" {
			v, err := io.ReadAll(io.LimitReader(p, shopNoFieldMax+1))
			if err == nil && len(v) <= shopNoFieldMax {
				shop = strings.TrimSpace(string(v))
			}
			break
		}
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(&read, r.Body), r.Body}
	return shop
}
