// Package schema embeds the numbered SQL migrations of sql/. It is named
// schema, not sql, so that it does not shadow database/sql where both are used.
package schema

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Migration is one numbered SQL file.
type Migration struct {
	Number int
	Name   string // the file name, such as "0001_ledger.sql"
	SQL    string
}

// Migrations returns the migrations in order. File names are NNNN_name.sql,
// numbered from 1 without gaps; anything else is a build mistake and panics.
func Migrations() []Migration {
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	out := make([]Migration, 0, len(names))
	for i, name := range names {
		num, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil || num != i+1 {
			panic(fmt.Sprintf("schema: migration %s is out of sequence (want number %d)", name, i+1))
		}
		body, err := files.ReadFile(name)
		if err != nil {
			panic(err)
		}
		out = append(out, Migration{Number: num, Name: name, SQL: string(body)})
	}
	return out
}

// Fingerprint is a short digest of all migrations. Tests name their template
// database after it, so a changed migration gets a new template.
func Fingerprint() string {
	h := sha256.New()
	for _, m := range Migrations() {
		h.Write([]byte(m.Name))
		h.Write([]byte{0})
		h.Write([]byte(m.SQL))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
