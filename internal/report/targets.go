package report

// KindTargets is the kind of the document profq targets writes.
const KindTargets = "targets"

// Targets is the "targets" report: what a continuous-profiling server (Grafana Pyroscope,
// Parca) can be queried for: its profile types, and its label names with their values.
type Targets struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "targets".
	Kind string `json:"kind"`
	// Server is the server as given, any password replaced by "xxxxx".
	Server string `json:"server"`
	// ServerKind is "pyroscope" or "parca".
	ServerKind string `json:"server_kind"`
	// StartNanos and EndNanos are the window the lists cover (from= and until=), in
	// nanoseconds since the Unix epoch.
	StartNanos int64 `json:"start_nanos"`
	EndNanos   int64 `json:"end_nanos"`
	// ProfileTypes are the profile types the server holds, sorted by id.
	ProfileTypes []TargetType `json:"profile_types"`
	// Labels are the label names, sorted, with their values: the first 1,000 names, each
	// of which takes a request.
	Labels []TargetLabel `json:"labels"`
	// LabelsLeftOut is how many label names came after those, their values not asked for
	// (a TYPE{SELECTOR} narrows the labels to those of some series); 0 when none.
	LabelsLeftOut int `json:"labels_left_out"`
}

// TargetType is one profile type a server holds.
type TargetType struct {
	// ID is the type as a query names it, the TYPE of TYPE{SELECTOR}:
	// name:sample_type:sample_unit:period_type:period_unit, such as
	// "process_cpu:cpu:nanoseconds:cpu:nanoseconds"; Parca adds ":delta" for delta profiles.
	ID string `json:"id"`
	// Name is the profile's name, such as "process_cpu" or "parca_agent".
	Name string `json:"name"`
	// SampleType is the type and unit of the profile's values.
	SampleType SampleType `json:"sample_type"`
	// PeriodType is the type and unit of its sampling period.
	PeriodType SampleType `json:"period_type"`
	// Delta says that the server holds the type as delta profiles (Parca); false for
	// Pyroscope, which does not say.
	Delta bool `json:"delta"`
}

// TargetLabel is one label name and its values.
type TargetLabel struct {
	// Name is the label's name, such as "service_name".
	Name string `json:"name"`
	// Values are its values, sorted.
	Values []string `json:"values"`
}

// NewTargets is the targets report of what a server answered, as the command that asked
// gathers it in t (every field but SchemaVersion and Kind): lists t leaves nil are [].
func NewTargets(t Targets) *Targets {
	r := t
	r.SchemaVersion, r.Kind = SchemaVersion, KindTargets
	r.ProfileTypes = append([]TargetType{}, t.ProfileTypes...)
	r.Labels = make([]TargetLabel, len(t.Labels))
	for i, l := range t.Labels {
		r.Labels[i] = TargetLabel{Name: l.Name, Values: append([]string{}, l.Values...)}
	}
	return &r
}
