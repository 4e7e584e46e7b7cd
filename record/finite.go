package record

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Finite makes every value JSON can carry out of v (a pointer: a *Run, a
// *Cell, ...): a float that is NaN or ±Inf, which encoding/json refuses
// ("json: unsupported value: NaN"), becomes 0 (absent from the JSON where
// the field is optional), and in a map the entry is removed. It returns
// one line per value it changed, naming it by its JSON path
// ("cells[2].stalls.median: NaN written as 0"), for the run's notes. Fields
// JSON does not write (`json:"-"`, unexported) are left alone: intervals.csv
// writes its own NaNs as empty fields.
//
// It walks the types by reflection, so that a field added to the record
// later is covered without anyone remembering to.
func Finite(v any) []string {
	var fixed []string
	finite(reflect.ValueOf(v), "", &fixed)
	return fixed
}

func finite(v reflect.Value, path string, fixed *[]string) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*fixed = append(*fixed, fmt.Sprintf("%s: %v written as 0", path, f))
			v.SetFloat(0)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			finite(v.Elem(), path, fixed)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if k := e.Kind(); (k == reflect.Float32 || k == reflect.Float64) && v.CanSet() {
			// A float in an interface cannot be set in place: replace it.
			if f := e.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
				*fixed = append(*fixed, fmt.Sprintf("%s: %v written as 0", path, f))
				v.Set(reflect.Zero(e.Type()))
			}
			return
		}
		if e.Kind() == reflect.Struct && v.CanSet() {
			// A struct in an interface (an engine's options) cannot be set
			// in place either: fix a copy and put it back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			before := len(*fixed)
			finite(c, path, fixed)
			if len(*fixed) > before {
				v.Set(c)
			}
			return
		}
		finite(e, path, fixed)
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			name, ok := jsonName(sf)
			if !ok {
				continue
			}
			if sf.Anonymous && sf.Tag.Get("json") == "" {
				finite(v.Field(i), path, fixed) // an embedded struct's fields are the parent's
				continue
			}
			finite(v.Field(i), join(path, name), fixed)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			finite(v.Index(i), path+"["+strconv.Itoa(i)+"]", fixed)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		iter := v.MapRange()
		type entry struct{ k, v reflect.Value }
		var changed []entry
		for iter.Next() {
			k, e := iter.Key(), iter.Value()
			p := path + "[" + fmt.Sprint(k.Interface()) + "]"
			if e.Kind() == reflect.Float32 || e.Kind() == reflect.Float64 {
				if f := e.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
					*fixed = append(*fixed, fmt.Sprintf("%s: %v left out", p, f))
					changed = append(changed, entry{k, reflect.Value{}})
				}
				continue
			}
			// Map elements are not addressable: fix a copy, put it back.
			cp := reflect.New(e.Type()).Elem()
			cp.Set(e)
			n := len(*fixed)
			finite(cp, p, fixed)
			if len(*fixed) > n {
				changed = append(changed, entry{k, cp})
			}
		}
		for _, c := range changed {
			v.SetMapIndex(c.k, c.v) // the zero Value deletes
		}
	}
}

// jsonName is the field's name in JSON; false for a field JSON leaves out.
func jsonName(sf reflect.StructField) (string, bool) {
	if !sf.IsExported() && !sf.Anonymous {
		return "", false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = sf.Name
	}
	return name, true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
