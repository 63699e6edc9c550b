package sandbox

import (
	"reflect"
	"testing"
)

// clone copies every slice of a Config: a field added later and forgotten
// in clone shares its backing array and fails here.
func TestConfigCloneIsDeep(t *testing.T) {
	var cfg Config
	v := reflect.ValueOf(&cfg).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Slice {
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
	}
	c := cfg.clone()
	cv := reflect.ValueOf(c)
	for i := range v.NumField() {
		if v.Field(i).Kind() != reflect.Slice {
			continue
		}
		if cv.Field(i).Len() != 1 || cv.Field(i).Pointer() == v.Field(i).Pointer() {
			t.Errorf("clone shares or drops Config.%s", v.Type().Field(i).Name)
		}
	}
	if !reflect.DeepEqual(c, cfg) {
		t.Errorf("clone differs: %+v", c)
	}
}
