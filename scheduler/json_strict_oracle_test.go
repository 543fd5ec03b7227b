package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// strictCheckOracle is the former strictCheck, kept as the oracle that
// strictCheck must agree with: it re-reads each nested value once per
// level of nesting, which made decoding slow, but its rules are plain.
// Its doc as it was:
//
// strictCheck finds, in document order, what encoding/json accepts and
// the contract does not: an object key that names no field of t exactly
// (encoding/json matches keys without regard to case), a key that an
// object repeats (encoding/json keeps the last value), and a null
// (encoding/json leaves the value as it was, so that a null would pass
// for a zero or a default). It reports false, the message ("unknown
// field \"x\"", "duplicate field \"x\"", "want an integer, got null")
// and the path of the object that holds the key, or of the null
// ("fairshare.weights", "allocation[0]"; "" for raw itself), when it
// finds one. A null where a scalar belongs in a list is named by the
// list, as the decoder's type errors are ("allocation[0].gpus").
// Values of the wrong type are left to the decoder to report; a
// json.RawMessage is left to the decoding of the part it holds.
func strictCheckOracle(raw []byte, t reflect.Type) (path, msg string, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessageType:
		return "", "", true
	case string(bytes.Trim(raw, " \t\r\n")) == "null":
		return "", fmt.Sprintf("want %s, got null", kindOf(t)), false
	case t.Kind() == reflect.Slice:
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return "", "", true
		}
		for i, e := range elems {
			if p, m, ok := strictCheckOracle(e, t.Elem()); !ok {
				if p == "" && !isContainer(t.Elem()) {
					return "", m, false // a scalar: named by its list
				}
				return joinPath(fmt.Sprintf("[%d]", i), p), m, false
			}
		}
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return "", "", true
		}
		var seen map[string]bool
		for dec.More() {
			tok, err := dec.Token()
			k, isKey := tok.(string)
			var val json.RawMessage
			if err != nil || !isKey || dec.Decode(&val) != nil {
				return "", "", true // not JSON: the decoder reports it
			}
			vt := t
			if t.Kind() == reflect.Map {
				vt = t.Elem()
			} else if f, found := oracleFieldByTag(t, k); found {
				vt = f.Type
			} else {
				return "", fmt.Sprintf("unknown field %q", k), false
			}
			if seen[k] {
				return "", fmt.Sprintf("duplicate field %q", k), false
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[k] = true
			if p, m, ok := strictCheckOracle(val, vt); !ok {
				return joinPath(k, p), m, false
			}
		}
	}
	return "", "", true
}

// oracleFieldByTag is the field of struct t whose json tag names key.
func oracleFieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
