// Package contracttest holds Go types equal to an OpenAPI document: it
// compares a schema with the Go type that stands for it, field by field
// and both ways, so that a client's request and answer types cannot drift
// from docs/openapi.yaml or docs/openapi-internal.yaml. Tests of the
// clients (api/client, internal/netclient) use it; it is not for
// production code.
package contracttest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

var (
	docsMu sync.Mutex
	docs   = map[string]*openapi3.T{}
)

// Load loads and validates the document at path, once per test binary.
func Load(t testing.TB, path string) *openapi3.T {
	t.Helper()
	docsMu.Lock()
	defer docsMu.Unlock()
	if d, ok := docs[path]; ok {
		return d
	}
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromFile(path)
	if err == nil {
		err = d.Validate(loader.Context)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	docs[path] = d
	return d
}

// Options say how the Go side writes what JSON Schema cannot name.
type Options struct {
	// Decimal is the exact decimal type every JSON number that is not an
	// integer must be (never float64).
	Decimal reflect.Type
	// Request: the type is sent, not received. A property the schema
	// requires must then not be omitempty (it would vanish when zero).
	Request bool
	// NotClient are the documented operations the client deliberately does
	// not call, by operation id, each with the reason (CheckOperations).
	NotClient map[string]string
}

// Compare returns the differences between s and typ, each naming its path
// (name, then .field, [] for array items). Both ways: every property of
// the schema must be a field of the type (by its json name), every field
// a property; then each pair is compared in turn. A schema with
// additionalProperties must have a map field tagged `json:"-"` for them.
// A nullable or optional property of a number or object is a pointer, a
// number is Decimal (or an integer type for "integer"), a date-time is
// time.Time.
func Compare(name string, s *openapi3.Schema, typ reflect.Type, o Options) []string {
	c := &comparer{o: o}
	c.compare(name, s, typ, true, false)
	sort.Strings(c.problems)
	return c.problems
}

type comparer struct {
	o        Options
	problems []string
}

func (c *comparer) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

var (
	timeType = reflect.TypeOf(time.Time{})
	// rawType is left raw on purpose, decoded later into a type that is
	// compared on its own (a callback's data): it matches any schema.
	rawType = reflect.TypeOf(json.RawMessage{})
)

// flat is a schema with its oneOf/allOf folded: the union of the object
// branches' properties, whether null is allowed, the scalar types.
type flat struct {
	types      map[string]bool
	props      map[string]*openapi3.Schema
	required   map[string]bool
	additional *openapi3.Schema
	items      *openapi3.Schema
	format     string
	pattern    string
}

func flatten(s *openapi3.Schema) *flat {
	f := &flat{types: map[string]bool{}, props: map[string]*openapi3.Schema{}, required: map[string]bool{}}
	var walk func(s *openapi3.Schema, inBranch bool)
	walk = func(s *openapi3.Schema, inBranch bool) {
		if s == nil {
			return
		}
		if s.Type != nil {
			for _, t := range *s.Type {
				f.types[t] = true
			}
		}
		if s.Format != "" {
			f.format = s.Format
		}
		if s.Pattern != "" {
			f.pattern = s.Pattern
		}
		for k, p := range s.Properties {
			if p != nil && p.Value != nil {
				if old, ok := f.props[k]; !ok || (len(old.Properties) == 0 && len(p.Value.Properties) > 0) {
					f.props[k] = p.Value
				}
			}
		}
		if !inBranch {
			for _, r := range s.Required {
				f.required[r] = true
			}
		}
		if s.AdditionalProperties.Schema != nil && s.AdditionalProperties.Schema.Value != nil {
			f.additional = s.AdditionalProperties.Schema.Value
		}
		if s.Items != nil && s.Items.Value != nil {
			f.items = s.Items.Value
		}
		for _, b := range s.AllOf {
			walk(b.Value, inBranch)
		}
		for _, b := range s.OneOf {
			walk(b.Value, true)
		}
	}
	walk(s, false)
	if len(f.props) > 0 {
		f.types["object"] = true
	}
	return f
}

func (c *comparer) compare(path string, s *openapi3.Schema, typ reflect.Type, required, nullableOK bool) {
	f := flatten(s)
	ptr := false
	for typ.Kind() == reflect.Pointer {
		ptr = true
		typ = typ.Elem()
	}
	switch {
	case f.types["null"] && !ptr && typ.Kind() != reflect.Slice && typ.Kind() != reflect.Map && typ.Kind() != reflect.Interface:
		c.addf("%s: the spec allows null; the Go type %s cannot be nil (use a pointer)", path, typ)
	case !required && !ptr && (typ == c.o.Decimal || typ.Kind() == reflect.Struct && typ != timeType) && !c.o.Request:
		c.addf("%s: optional in the spec; the Go type %s cannot tell it absent (use a pointer)", path, typ)
	}
	switch {
	case typ == rawType:
	case typ == c.o.Decimal:
		if !f.types["number"] || f.types["integer"] {
			c.addf("%s: Go type %s is an exact decimal; the spec says %v", path, typ, keys(f.types))
		}
	case typ == timeType:
		if !f.types["string"] || f.format != "date-time" {
			c.addf("%s: Go type time.Time; the spec says %v format %q", path, keys(f.types), f.format)
		}
	case f.types["object"] || typ.Kind() == reflect.Struct:
		c.object(path, f, typ)
	case f.types["array"] || typ.Kind() == reflect.Slice:
		if typ.Kind() != reflect.Slice || f.items == nil {
			c.addf("%s: the spec says %v, the Go type is %s", path, keys(f.types), typ)
			return
		}
		c.compare(path+"[]", f.items, typ.Elem(), true, false)
	default:
		c.scalar(path, f, typ)
	}
}

func (c *comparer) scalar(path string, f *flat, typ reflect.Type) {
	ok := false
	for t := range f.types {
		switch t {
		case "string":
			ok = ok || typ.Kind() == reflect.String
		case "integer":
			switch typ.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				ok = true
			}
		case "boolean":
			ok = ok || typ.Kind() == reflect.Bool
		case "number":
			// Never a binary float: numbers are Decimal (handled above).
		}
	}
	if len(f.types) == 0 {
		// An untyped schema (a oneOf of consts): anything the decoder takes.
		ok = true
	}
	if !ok {
		c.addf("%s: the spec says %v, the Go type is %s", path, keys(f.types), typ)
	}
}

// jsonField is a struct field by its JSON name.
type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

func fieldsOf(typ reflect.Type) (map[string]jsonField, reflect.Type) {
	out := map[string]jsonField{}
	var extra reflect.Type
	for i := 0; i < typ.NumField(); i++ {
		sf := typ.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			if sf.Type.Kind() == reflect.Map {
				extra = sf.Type
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			inner, ex := fieldsOf(sf.Type)
			for k, v := range inner {
				out[k] = v
			}
			if ex != nil {
				extra = ex
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = jsonField{typ: sf.Type, omitempty: strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")}
	}
	return out, extra
}

func (c *comparer) object(path string, f *flat, typ reflect.Type) {
	if typ.Kind() != reflect.Struct {
		c.addf("%s: the spec has an object, the Go type is %s", path, typ)
		return
	}
	fields, extra := fieldsOf(typ)
	for name := range f.props {
		if _, ok := fields[name]; !ok {
			c.addf("%s.%s: in the spec, not in the Go type %s", path, name, typ)
		}
	}
	for name := range fields {
		if _, ok := f.props[name]; !ok {
			c.addf("%s.%s: in the Go type %s, not in the spec", path, name, typ)
		}
	}
	if (f.additional != nil) != (extra != nil) {
		c.addf("%s: additionalProperties in the spec: %v; a json:\"-\" map for them in %s: %v", path, f.additional != nil, typ, extra != nil)
	}
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := f.props[name]
		if !ok {
			continue
		}
		fd := fields[name]
		if c.o.Request && f.required[name] && fd.omitempty && fd.typ.Kind() != reflect.Struct {
			c.addf("%s.%s: required by the spec, omitempty in the Go type (a zero value would not be sent)", path, name)
		}
		c.compare(path+"."+name, p, fd.typ, f.required[name], false)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
