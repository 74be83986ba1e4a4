package report

// KindPGO is the kind of the document profq pgo writes about the profile it made.
const KindPGO = "pgo"

// PGO is the "pgo" report: what profq pgo read, and what the profile it wrote for
// go build -pgo keeps of it.
type PGO struct {
	// SchemaVersion is always SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// Kind is always "pgo".
	Kind string `json:"kind"`
	// Output is where the profile was written: the -o path, or "-" for standard output.
	Output string `json:"output"`
	// SampleType is the profile's one sample type: "cpu"/"nanoseconds" or "samples"/"count",
	// the one of the two that every input has and the first input lists first.
	SampleType SampleType `json:"sample_type"`
	// Keep is the --keep share, in percent: the hottest call edges kept make up more than
	// this share of the total weight. 100 keeps every edge.
	Keep float64 `json:"keep_percent"`
	// Inputs are the profiles read, in argument order.
	Inputs []PGOInput `json:"inputs"`
	// Edges counts the call edges: those the compiler reads from the merged inputs, those
	// kept, the placeholders that carry the weight of the others, and the compiler's hot
	// call sites among them.
	Edges PGOEdges `json:"edges"`
	// Weight is the compiler's weights: its total (the sum of every edge, which the
	// written profile keeps), the weight of the edges kept, and of the lightest hot edge.
	Weight PGOWeight `json:"weight"`
	// Bytes are the sizes of the profile written and of the profile with every edge kept,
	// gzipped.
	Bytes PGOBytes `json:"bytes"`
}

// PGOInput is one input of a pgo report.
type PGOInput struct {
	// Source is the argument as given, without its @WEIGHT.
	Source string `json:"source"`
	// Format is what the input was read as: "pprof", "otlp", "perf", ...
	Format string `json:"format"`
	// Weight multiplies the input's values.
	Weight float64 `json:"weight"`
	// Samples is the number of samples the input holds.
	Samples int `json:"samples"`
	// Read is the input's sample type whose values were used: the sample type of the
	// result, or one meaning the same (a CPU time in another unit or name, a perf cycles
	// event), multiplied by Scale to be in the result's unit.
	Read  SampleType `json:"read"`
	Scale int64      `json:"scale"`
	// Warnings are what reading the input noticed and passed over; [] when nothing.
	Warnings []string `json:"warnings"`
}

// PGOEdges counts call edges.
type PGOEdges struct {
	// Total is how many call edges the compiler would read from the inputs merged.
	Total int `json:"total"`
	// Kept is how many of them the profile written keeps: the heaviest.
	Kept int `json:"kept"`
	// Placeholders is how many placeholder edges carry the weight of those left out.
	Placeholders int `json:"placeholders"`
	// Hot is how many edges the compiler treats as hot call sites at its default
	// threshold: the heaviest, making up more than 99% of the total weight.
	Hot int `json:"hot"`
}

// PGOWeight is the compiler's weights, in the sample type's unit.
type PGOWeight struct {
	// Total is the sum of the weights of every call edge.
	Total int64 `json:"total"`
	// Kept is the weight of the edges kept.
	Kept int64 `json:"kept"`
	// KeptShare is Kept / Total (0 to 1); 0 when Total is 0.
	KeptShare float64 `json:"kept_share"`
	// HotThreshold is the weight of the lightest hot edge; 0 without edges.
	HotThreshold int64 `json:"hot_threshold"`
}

// PGOBytes are sizes, in bytes, of gzipped profile.proto.
type PGOBytes struct {
	// Written is the size of the profile written.
	Written int64 `json:"written"`
	// Untrimmed is the size the profile has with every edge kept.
	Untrimmed int64 `json:"untrimmed"`
}

// NewPGO is the report of what profq pgo made from its inputs, as the command gathers it in
// r (every field but SchemaVersion, Kind and Weight.KeptShare): a Keep of 0 is 100, as it
// keeps every edge, and lists r leaves nil are [].
func NewPGO(r PGO) *PGO {
	r.SchemaVersion, r.Kind = SchemaVersion, KindPGO
	if r.Keep == 0 {
		r.Keep = 100
	}
	r.Weight.KeptShare = 0
	if r.Weight.Total > 0 {
		r.Weight.KeptShare = float64(r.Weight.Kept) / float64(r.Weight.Total)
	}
	inputs := make([]PGOInput, len(r.Inputs))
	for i, in := range r.Inputs {
		in.Warnings = append([]string{}, in.Warnings...)
		inputs[i] = in
	}
	r.Inputs = inputs
	return &r
}
