package client

import (
	"fmt"
	"reflect"
	"strings"
)

// unsetDecimal is the JSON path ("amount", "items[2].amount") of the first
// required Decimal of body that was never set, or "". A Decimal field is
// required unless it is a *Decimal; sending an unset one as 0 would move
// money the caller never named, so the call fails before it is sent, and
// the error names the field as the gateway's 400 would.
func unsetDecimal(body any) string {
	return unsetIn(reflect.ValueOf(body), "")
}

var decimalType = reflect.TypeOf(Decimal{})

func unsetIn(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		return unsetIn(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p := unsetIn(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Struct:
		if v.Type() == decimalType {
			if !v.Interface().(Decimal).IsSet() {
				return path
			}
			return ""
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			if path != "" {
				name = path + "." + name
			}
			if p := unsetIn(v.Field(i), name); p != "" {
				return p
			}
		}
	}
	return ""
}

// jsonName is the field's name in JSON; false for a field JSON skips.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch tag {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return tag, true
}
