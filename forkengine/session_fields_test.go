package forkengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// frozenHashSnapshot is a snapshot of each version whose session fields all differ, so a hash that
// moved or dropped one would change.
func frozenHashSnapshot(version int) Snapshot {
	at := time.Date(2026, 12, 2, 8, 0, 0, 654321000, time.UTC)
	deleted := at.Add(time.Minute)
	s := Snapshot{Version: version, Session: Session{WorkspaceID: "w1", ID: "s1",
		Kind: SessionChild, Provider: "prov", ProviderSessionID: "ps", Title: "ti & <t>",
		RailSectionKey: "rail", Cwd: "/cwd", Model: "mod", Settings: json.RawMessage(`{"a": 1}`), Visible: true,
		CreatedAt: at, UpdatedAt: at.Add(time.Second), DeletedAt: &deleted}}
	turn := Turn{WorkspaceID: "w1", SessionID: "s1", ID: "t1", Sequence: 1, Phase: PhaseSettled,
		Outcome: OutcomeCompleted, Origin: "report", StartedAt: at, SettledAt: &at, UpdatedAt: at,
		ProviderTurnID: "pt1", ProviderTurnBinding: json.RawMessage(`{"k":"v"}`)}
	if version == 1 {
		s.Turns = []Turn{turn}
		s.Messages = []Message{{WorkspaceID: "w1", SessionID: "s1", TurnID: "t1", ID: "m1", Position: 3,
			Role: RoleUser, Content: "hi", CreatedAt: at}}
		return s
	}
	s.Boundary = &turn
	s.Segments = []HistorySegment{{OwnerWorkspaceID: "w1", OwnerSessionID: "s1", From: 1, To: 1, Watermark: 3}}
	s.PrefixTurns, s.BoundTurns = 1, 1
	return s
}

// The hashes operations in flight were prepared with, by the forkgraph before the session's
// fields were described by tags (main at 8362596): an upgrade must verify every one of them, so
// none may change. A version 1 hash does not cover metadata (its session is hashed field by
// field, as it was before metadata existed); the others do.
func TestFrozenSnapshotHashesStillVerify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version  int
		metadata bool
		scheme   func(Snapshot) (string, error)
		want     string
	}{
		{1, false, snapshotHash, "2:03033f48c82a715fceab7f84fcb172e6863086f996a166b16107fe41ca647056"},
		{1, true, snapshotHash, "2:03033f48c82a715fceab7f84fcb172e6863086f996a166b16107fe41ca647056"},
		{2, false, snapshotHash, "2:840fed22754d4cacb7fcb79b80c7900dbfd1105842a49a361bf1e4e8cc2e7332"},
		{2, true, snapshotHash, "2:e166efc2eaa1576e4bbdf0c47bda010b1888eba64bc22fe8f043e8602bbeca90"},
		{1, false, jsonSnapshotHash, "f86c2916f4b2b16f8172020c2560ad036d1bd6eec467c2fdc3a0f5d3837d91ec"},
		{1, true, jsonSnapshotHash, "44aed6afd79222249367abad4be83dfaa6515dfc07d57f58fd60d1e4057020d3"},
		{2, false, jsonSnapshotHash, "becb6ccd45a3331cfdf657a05ce7c264ca96fc44fc2b8a1bfe27b66a15b0b6b3"},
		{2, true, jsonSnapshotHash, "10579c432e5eaac031573c9fb6239fdc7ea1f4567cf374febdefa5749362776f"},
	} {
		s := frozenHashSnapshot(c.version)
		if c.metadata {
			s.Session.Metadata = json.RawMessage(`{"goal": "x"}`)
		}
		got, err := c.scheme(s)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "version %d, metadata %v", c.version, c.metadata)
		match, err := snapshotMatches(s, c.want)
		require.NoError(t, err)
		require.True(t, match)
	}
}

// The version 1 hash covers every base field: changing any one of them breaks the match.
func TestVersion1HashCoversEveryBaseField(t *testing.T) {
	t.Parallel()
	want, err := snapshotHash(frozenHashSnapshot(1))
	require.NoError(t, err)
	for _, f := range SessionSnapshotFields() {
		if !f.Base() {
			continue
		}
		s := frozenHashSnapshot(1)
		v := reflect.ValueOf(&s.Session).Elem().Field(f.Index)
		switch f.Kind {
		case SnapshotText:
			v.SetString(v.String() + "!")
		case SnapshotJSON:
			v.SetBytes([]byte(`{"b":2}`))
		case SnapshotBool:
			v.SetBool(!v.Bool())
		case SnapshotTime:
			v.Set(reflect.ValueOf(s.Session.CreatedAt.Add(time.Hour)))
		case SnapshotOptionalTime:
			v.Set(reflect.Zero(v.Type()))
		}
		match, err := snapshotMatches(s, want)
		require.NoError(t, err)
		require.False(t, match, f.Name)
	}
}

// A later field (metadata, railProjectPath) left zero keeps every frozen hash
// (TestFrozenSnapshotHashesStillVerify); set, it is covered by the version 2 hash, and the version
// 1 hash, field by field over the base places, stays as it was.
func TestLaterFieldsAreHashedOnlyWhenSet(t *testing.T) {
	t.Parallel()
	later := 0
	for _, f := range SessionSnapshotFields() {
		if f.Base() {
			continue
		}
		later++
		t.Run(f.Name, func(t *testing.T) {
			for _, version := range []int{1, 2} {
				want, err := snapshotHash(frozenHashSnapshot(version))
				require.NoError(t, err)
				s := frozenHashSnapshot(version)
				v := reflect.ValueOf(&s.Session).Elem().Field(f.Index)
				switch f.Kind {
				case SnapshotText:
					v.SetString("/projects/x")
				case SnapshotJSON:
					v.SetBytes([]byte(`{"b":2}`))
				default:
					t.Fatalf("no value for a later field of kind %d", f.Kind)
				}
				match, err := snapshotMatches(s, want)
				require.NoError(t, err)
				require.Equal(t, version == 1, match, "version %d", version)
			}
		})
	}
	require.GreaterOrEqual(t, later, 2, "metadata and railProjectPath")
}

// The base places are the layout of the first encodings, in the order the hash of version 1
// and the store's first binary and compact formats wrote them: it must never change.
func TestSessionSnapshotPlacesOfTheFirstEncodings(t *testing.T) {
	t.Parallel()
	var base []string
	for _, f := range SessionSnapshotFields() {
		if f.Base() {
			base = append(base, fmt.Sprintf("%d %s %s", f.Number, f.Name, f.Key))
		}
	}
	require.Equal(t, []string{"1 WorkspaceID w", "2 ID i", "3 Kind k", "4 Provider p", "5 ProviderSessionID ps",
		"6 Title ti", "7 RailSectionKey r", "8 Cwd cw", "9 Model mo", "10 Settings se", "11 Visible vi",
		"12 CreatedAt ca", "13 UpdatedAt ua", "14 DeletedAt da"}, base)
}

// A tag that does not fit its field panics when the plan is made (at init, for Session).
func TestSessionFieldTagsThatDoNotFitPanic(t *testing.T) {
	t.Parallel()
	type base struct {
		A string          `snapshot:"1,a"`
		B string          `snapshot:"2,b"`
		C SessionKind     `snapshot:"3,c"`
		D string          `snapshot:"4,d"`
		E string          `snapshot:"5,e"`
		F string          `snapshot:"6,f"`
		G string          `snapshot:"7,g"`
		H string          `snapshot:"8,h"`
		I string          `snapshot:"9,i"`
		J json.RawMessage `snapshot:"10,j"`
		K bool            `snapshot:"11,k"`
		L time.Time       `snapshot:"12,l"`
		M time.Time       `snapshot:"13,m"`
		N *time.Time      `snapshot:"14,n"`
	}
	require.NotPanics(t, func() { planSnapshotFields(reflect.TypeFor[base]()) })
	require.NotPanics(t, func() {
		planSnapshotFields(flatten(reflect.TypeFor[struct {
			base
			Later *time.Time `json:",omitempty" snapshot:"15,o"`
		}]()))
	})
	for name, typ := range map[string]reflect.Type{
		"needs a tag": reflect.TypeFor[struct {
			base
			X string
		}](),
		"share the snapshot place": reflect.TypeFor[struct {
			base
			X string `json:",omitempty" snapshot:"3,x"`
		}](),
		"share the snapshot key": reflect.TypeFor[struct {
			base
			X string `json:",omitempty" snapshot:"15,a"`
		}](),
		"came after the first snapshots": reflect.TypeFor[struct {
			base
			X string `snapshot:"15,x"`
		}](),
		"a *time.Time for a time": reflect.TypeFor[struct {
			base
			X time.Time `json:",omitempty" snapshot:"15,x"`
		}](),
		"is a int": reflect.TypeFor[struct {
			base
			X int `json:",omitempty" snapshot:"15,x"`
		}](),
	} {
		t.Run(name, func(t *testing.T) {
			requirePanicsWith(t, name, func() { planSnapshotFields(flatten(typ)) })
		})
	}
	requirePanicsWith(t, "has the snapshot place 2 of the first encodings", func() {
		planSnapshotFields(reflect.TypeFor[struct {
			A string `snapshot:"1,a"`
		}]())
	})

	type session struct {
		Title string
		Hits  []int
		Seen  bool
	}
	for name, typ := range map[string]reflect.Type{
		"want key, replace": reflect.TypeFor[struct{ Title *string }](),
		"has report:\"keep\"": reflect.TypeFor[struct {
			Title string `report:"keep"`
		}](),
		"has report:\"replace\"": reflect.TypeFor[struct {
			Title *string `report:"replace"`
		}](),
		"applies to no field": reflect.TypeFor[struct {
			Other *string `report:"keep"`
		}](),
		"cannot be compared": reflect.TypeFor[struct {
			Hits []int `report:"replace"`
		}](),
		"only a text": reflect.TypeFor[struct {
			Seen *bool `report:"keep" check:"identifier"`
		}](),
	} {
		t.Run(name, func(t *testing.T) {
			requirePanicsWith(t, name, func() { planReportFields(reflect.TypeFor[session](), typ) })
		})
	}
}

// requirePanicsWith requires f to panic with a message holding want.
func requirePanicsWith(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		require.Contains(t, fmt.Sprint(r), want)
	}()
	f()
}

// flatten returns a struct type with the fields of t's embedded base followed by t's own, as
// Session declares them.
func flatten(t reflect.Type) reflect.Type {
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			for j := range f.Type.NumField() {
				fields = append(fields, f.Type.Field(j))
			}
			continue
		}
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
}

func TestInputNames(t *testing.T) {
	t.Parallel()
	for goName, want := range map[string]string{"ProviderSessionID": "providerSessionId", "ID": "id",
		"RailSectionKey": "railSectionKey", "Cwd": "cwd", "URLPath": "urlPath", "Metadata": "metadata"} {
		require.Equal(t, want, inputName(goName))
	}
}

// Every field a report applies reaches the session (set, it replaces the stored value; a kept
// one left out keeps it), and an identical replay is one that changes none of them.
func TestSessionReportAppliesEveryTaggedField(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	stored := frozenHashSnapshot(1).Session
	stored.DeletedAt = nil
	stored.Metadata = json.RawMessage(`{"team":"a"}`)
	require.Len(t, sessionFields.applied, reflect.TypeFor[SessionReport]().NumField()-2, "all but the two keys")

	empty := SessionReport{WorkspaceID: stored.WorkspaceID, ID: stored.ID, Kind: stored.Kind, Provider: stored.Provider}
	kept := applySessionReport(stored, true, empty, at)
	require.True(t, sameSession(stored, kept), "a report that gives nothing keeps every kept field")
	kept.UpdatedAt = stored.UpdatedAt
	require.Equal(t, stored, kept)

	for _, f := range sessionFields.applied {
		t.Run(f.name, func(t *testing.T) {
			in := empty
			field := reflect.ValueOf(&in).Elem().Field(f.from)
			want := reflect.ValueOf(stored).Field(f.to)
			var changed any
			switch want.Kind() {
			case reflect.String:
				changed = want.String() + "-changed"
			case reflect.Bool:
				changed = !want.Bool()
			case reflect.Slice:
				changed = json.RawMessage(`{"changed":true}`)
			default:
				t.Fatalf("no test value for a %s", want.Type())
			}
			value := reflect.ValueOf(changed).Convert(want.Type())
			if field.Kind() == reflect.Pointer {
				p := reflect.New(want.Type())
				p.Elem().Set(value)
				field.Set(p)
			} else {
				field.Set(value)
			}
			next := applySessionReport(stored, true, in, at)
			require.Equal(t, value.Interface(), reflect.ValueOf(next).Field(f.to).Interface())
			require.False(t, sameSession(stored, next), "a change of %s is not a replay", f.name)
		})
	}
}

// A report's texts follow the rules their tags give: railSectionKey names a section (the rules of
// ids), a title is free text; the first invalid field in name order is the one reported; JSON
// must be an object.
func TestSessionReportChecksTextsByTheirTags(t *testing.T) {
	t.Parallel()
	check := func(in SessionReport) error {
		in.WorkspaceID, in.ID, in.Provider = "w", "s", "simulated"
		return cleanSessionReport(&in)
	}
	spaced := " padded "
	var fe *Error
	err := check(SessionReport{RailSectionKey: &spaced})
	require.True(t, errors.As(err, &fe))
	require.Equal(t, ReasonInvalidID, fe.Reason)
	require.ErrorContains(t, err, "railSectionKey")
	require.NoError(t, check(SessionReport{Title: &spaced}))

	nul := "a\x00b"
	err = check(SessionReport{Title: &nul, Cwd: &nul})
	require.ErrorContains(t, err, "cwd", "cwd comes before title")
	require.True(t, errors.As(err, &fe))
	require.Equal(t, ReasonInvalidText, fe.Reason)

	err = check(SessionReport{Metadata: json.RawMessage(`[1]`)})
	require.ErrorContains(t, err, "metadata must be a JSON object")
	in := SessionReport{WorkspaceID: "w", ID: "s", Provider: "simulated", Settings: json.RawMessage(`{"a":1}`), Metadata: json.RawMessage{}}
	require.NoError(t, cleanSessionReport(&in))
	require.Nil(t, in.Metadata, "an empty value is no metadata")
	require.JSONEq(t, `{"a":1}`, string(in.Settings))
}
