package resolvers

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// LoaderNames lists exactly the relations newLoaders makes, so the batch-size metric's series
// exported from the start are the loaders there are.
func TestLoaderNamesAreTheLoaders(t *testing.T) {
	t.Parallel()
	engine, err := forkengine.New(forkengine.Config{Store: forkenginetest.NewMemStore(), Drivers: map[string]forkengine.Driver{}})
	require.NoError(t, err)
	l := reflect.ValueOf(newLoaders(context.Background(), loaderSources{engine: engine})).Elem()
	var names []string
	var collect func(v reflect.Value)
	collect = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() == reflect.Struct && f.Type().Name() == "listLoaders" { // the paged lists' group
				collect(f)
			}
			if f.Kind() != reflect.Pointer || f.IsNil() || !strings.HasPrefix(f.Type().Elem().Name(), "relation[") {
				continue
			}
			names = append(names, f.Elem().FieldByName("name").String())
		}
	}
	collect(l)
	require.NotEmpty(t, names)
	require.ElementsMatch(t, LoaderNames, names)
	require.Equal(t, len(names), len(slices.Compact(slices.Sorted(slices.Values(names)))), "each name once")
}
