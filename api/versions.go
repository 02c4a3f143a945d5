package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// API versions (docs/versioning.md). Every /shop answer is served at one
// dated version and says which in X-Api-Version: the version the request
// named in X-Api-Version, else the one its merchant is pinned to (the
// current one when it was created, merchants.api_version), else — before
// the merchant is known, as in a 401 — the current one. A version the table
// does not know, or a malformed one, is a 400 naming X-Api-Version.
//
// This file is the one place where a version changes an answer: the
// handlers render the first version's answers, and an answer served at a
// later version is passed through the change of every version after the
// first up to it, in order (render). Additive changes need no version.

// headerAPIVersion is the request and answer header.
const headerAPIVersion = "X-Api-Version"

// apiVersion is one dated version: change turns an answer of the version
// before it into this version's (the first version has none). It is given
// the route template and the envelope's data decoded as JSON (objects are
// map[string]any, lists []any, numbers json.Number), and returns the new
// data.
type apiVersion struct {
	name   string
	change func(route string, data any) any
}

// apiVersions is every supported version, oldest first; the last is the
// current one, the one a new merchant is pinned to. Adding one: append it
// here with its change, move merchants.api_version's default to it in a new
// migration (TestVersionDefaultIsCurrent checks they agree), and document
// it in docs/versioning.md.
var apiVersions = versionTable{
	{name: "2026-11-23"}, // the first: the spec's answers with docs/api.md's additions
}

// versionTable is a list of versions, oldest first. The server takes its
// own (Deps.versions), so that a test can serve a later, test-only one.
type versionTable []apiVersion

// current is the newest version.
func (t versionTable) current() string { return t[len(t)-1].name }

// index finds a version by name.
func (t versionTable) index(name string) (int, bool) {
	for i, v := range t {
		if v.name == name {
			return i, true
		}
	}
	return 0, false
}

// names lists the versions, for the message of a 400.
func (t versionTable) names() string {
	out := make([]string, len(t))
	for i, v := range t {
		out[i] = v.name
	}
	return strings.Join(out, ", ")
}

// render is the data of an answer served at version name: the handlers'
// data unchanged at the first version, else passed through the changes of
// the versions after the first up to name. Data that is nil (a failure) or
// cannot be encoded is left to the envelope's encoder.
func (t versionTable) render(name, route string, data any) any {
	at, ok := t.index(name)
	if !ok || at == 0 || data == nil {
		return data
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return data
	}
	// Numbers stay the text the handlers wrote (an amount keeps its
	// currency's decimals: 1.00, not 1).
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data
	}
	for _, ver := range t[1 : at+1] {
		if ver.change != nil {
			v = ver.change(route, v)
		}
	}
	return v
}

// versionState is what withAPIVersion leaves in the context of a /shop
// request: the table and the version the request named, if any.
type versionState struct {
	table     versionTable
	requested string
}

const versionKey = "api.version"

// withAPIVersion reads X-Api-Version on every /shop request, before
// authentication (so that a 401 also says its version): given more than
// once, malformed or unknown is a 400 naming the header.
func withAPIVersion(t versionTable) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := c.Request.URL.Path
		if p != "/shop" && !strings.HasPrefix(p, "/shop/") {
			c.Next()
			return
		}
		st := &versionState{table: t}
		c.Set(versionKey, st)
		vs := c.Request.Header.Values(headerAPIVersion)
		if len(vs) == 0 {
			c.Next()
			return
		}
		if len(vs) > 1 {
			writeError(c, postings.FieldErrorf(headerAPIVersion, "header must appear once"))
			return
		}
		if _, err := time.Parse(time.DateOnly, vs[0]); err != nil || len(vs[0]) != len(time.DateOnly) {
			writeError(c, postings.FieldErrorf(headerAPIVersion, "must be a date, YYYY-MM-DD, naming a supported version: %s", t.names()))
			return
		}
		if _, ok := t.index(vs[0]); !ok {
			writeError(c, postings.FieldErrorf(headerAPIVersion, "is not a supported version; supported: %s", t.names()))
			return
		}
		st.requested = vs[0]
		c.Next()
	}
}

// servedVersion is the version an answer is served at, and whether the
// request is a /shop one (only those carry a version).
func servedVersion(c *gin.Context) (versionTable, string, bool) {
	v, ok := c.Get(versionKey)
	if !ok {
		return nil, "", false
	}
	st := v.(*versionState)
	if st.requested != "" {
		return st.table, st.requested, true
	}
	if m, ok := c.Get(merchantKey); ok {
		pinned := m.(*merchant.Merchant).APIVersion
		if _, known := st.table.index(pinned); known {
			return st.table, pinned, true
		}
		// A merchant pinned to a retired version gets the oldest one
		// (docs/versioning.md: retiring moves the pins first).
		return st.table, st.table[0].name, true
	}
	return st.table, st.table.current(), true
}

// echoVersion says in the answer which version serves it, and renders data
// at that version; every /shop answer passes here (writeEnvelope, the CSV
// bill).
func echoVersion(c *gin.Context, data any) any {
	t, name, ok := servedVersion(c)
	if !ok {
		return data
	}
	c.Header(headerAPIVersion, name)
	return t.render(name, c.FullPath(), data)
}
