// Package metadata reads an entry's metadata as audit verify streams it:
// the flat jsonb object of strings the writer makes, without reflection,
// falling back to encoding/json for anything else (FuzzParse holds the two
// readings equal). Pure: it imports nothing of the module.
package metadata

import "encoding/json"

// Parse reads an entry's metadata, the text of a jsonb object of
// strings, into m (cleared first). The writer's metadata is flat and
// plain ([a-z0-9_] keys, [A-Za-z0-9_.:/+-] values: postings.Entry), and
// PostgreSQL prints it as {"k": "v", …}: that form is read here without
// reflection, which was half of the stream's time for an entry with facts
// (encoding/json builds the map through reflect). Anything else — an
// escape, a number, a nested value, a duplicate key — goes to
// encoding/json, whose result (or refusal) is then the answer, so the
// two readings never differ (FuzzParseMetadata).
func Parse(b []byte, m map[string]string) (map[string]string, error) {
	if m == nil {
		m = make(map[string]string, 8)
	}
	clear(m)
	if fastMetadata(b, m) {
		return m, nil
	}
	clear(m)
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// fastMetadata fills m from b when b is a flat object of plain strings,
// and reports whether it was.
func fastMetadata(b []byte, m map[string]string) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		k, next, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		v, next, ok := plainString(b, skipSpace(b, i+1))
		if !ok {
			return false
		}
		if _, dup := m[string(k)]; dup {
			return false // encoding/json keeps the last; let it decide
		}
		m[string(k)] = string(v)
		i = skipSpace(b, next)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// plainString reads a JSON string at b[i] made of printable ASCII without
// escapes, returning its content and the index after it.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
