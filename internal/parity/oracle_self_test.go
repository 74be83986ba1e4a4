package parity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOracle checks the pprof oracle against outputs recorded in pprof-semantics.md §14, so a
// broken oracle cannot make the parity tests pass by accident.
func TestOracle(t *testing.T) {
	sample := pprofProfile(t, "internal/report/testdata/sample.cpu")
	const ms = 1_000_000

	t.Run("sample.cpu -nodecount=5", func(t *testing.T) {
		got, _, err := pprofTop([]string{"-nodecount=5"}, []string{sample})
		if err != nil {
			t.Fatal(err)
		}
		want := &table{
			Type: "cpu", Total: 1760 * ms, Shown: 1640 * ms, Candidates: 14,
			Rows: []row{
				{"runtime.mapiternext", 1280 * ms, 1370 * ms, ""},
				{"main.busyLoop", 150 * ms, 1760 * ms, ""},
				{"math.Abs", 110 * ms, 110 * ms, "inline"},
				{"runtime.evacuate", 60 * ms, 70 * ms, ""},
				{"runtime.add", 40 * ms, 40 * ms, "inline"},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("oracle output (-want +got):\n%s", diff)
		}
	})

	// A run with filters and another sort must not leak into the next run: pprof's driver
	// keeps its configuration in a package variable.
	t.Run("no leak between runs", func(t *testing.T) {
		if _, _, err := pprofTop([]string{"-cum", "-lines", "-focus=evacuate", "-nodecount=3", "-mean"}, []string{sample}); err != nil {
			t.Fatal(err)
		}
		got, _, err := pprofTop([]string{"-cum", "-nodecount=5"}, []string{sample})
		if err != nil {
			t.Fatal(err)
		}
		want := []row{
			{"main.busyLoop", 150 * ms, 1760 * ms, ""},
			{"main.main", 0, 1760 * ms, ""},
			{"runtime.main", 0, 1760 * ms, ""},
			{"runtime.mapiternext", 1280 * ms, 1370 * ms, ""},
			{"runtime.mapassign_fast64", 40 * ms, 130 * ms, ""},
		}
		if diff := cmp.Diff(want, got.Rows); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		if got.Total != 1760*ms {
			t.Errorf("total = %d, want %d", got.Total, 1760*ms)
		}
	})

	t.Run("large.cpu dropped nodes", func(t *testing.T) {
		large := pprofProfile(t, "internal/proftest/testdata/large.cpu")
		got, _, err := pprofTop([]string{"-nodecount=10"}, []string{large})
		if err != nil {
			t.Fatal(err)
		}
		const s = 1_000_000_000
		if got.Total != 24029*s/100 || got.Dropped != 23033 || len(got.Rows) != 5 || got.Candidates != 5 {
			t.Errorf("total %d, dropped %d, %d rows, %d candidates; want 240.29s, 23033, 5, 5",
				got.Total, got.Dropped, len(got.Rows), got.Candidates)
		}
		if len(got.Rows) > 0 && (got.Rows[0] != row{"time.Now", 20517 * s / 100, 20517 * s / 100, ""}) {
			t.Errorf("first row %+v, want time.Now 205.17s", got.Rows[0])
		}
	})

	t.Run("count unit", func(t *testing.T) {
		thread := pprofProfile(t, "profile/testdata/cppbench.thread")
		got, _, err := pprofTop(nil, []string{thread})
		if err != nil {
			t.Fatal(err)
		}
		if got.Total != 4 || got.Type != "thread" || len(got.Rows) == 0 {
			t.Errorf("got %+v, want type thread, total 4 and some rows", got)
		}
	})

	t.Run("merge rescales units", func(t *testing.T) {
		// java.contention counts delay in microseconds, cppbench.contention in nanoseconds;
		// the merged profile is in nanoseconds and its total is the sum of both.
		java := pprofProfile(t, "profile/testdata/java.contention")
		cpp := pprofProfile(t, "profile/testdata/cppbench.contention")
		a, _, err := pprofTop(nil, []string{java})
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := pprofTop(nil, []string{cpp})
		if err != nil {
			t.Fatal(err)
		}
		ab, _, err := pprofTop(nil, []string{java, cpp})
		if err != nil {
			t.Fatal(err)
		}
		if a.Total != 1900_000 || ab.Total != a.Total+b.Total {
			t.Errorf("totals: java %d (want 1900000ns), cppbench %d, merged %d", a.Total, b.Total, ab.Total)
		}
	})
}

func TestParseTop(t *testing.T) {
	out := `File: app
Type: delay
Time: 2024-01-01 00:00:00 UTC
Active filters:
   focus=x
Showing nodes accounting for -60ns, 40.00% of 150ns total
Dropped 2 nodes (cum <= 1ns)
Showing top 3 nodes out of 7
      flat  flat%   sum%        cum   cum%
     -60ns 40.00% 40.00%      -60ns 40.00%  main.X
        0     0% 40.00%       90ns 60.00%  0000000000002000 main.inner inl.go:10 (inline)
      30ns 20.00%   100%       30ns 20.00%  std::vector<int>::push_back(int const&) (partial-inline)
`
	got, err := parseTop(out, outUnit{"ns", "ns"})
	if err != nil {
		t.Fatal(err)
	}
	want := &table{
		Type: "delay", Total: 150, Shown: -60, Dropped: 2, Candidates: 7,
		Rows: []row{
			{"main.X", -60, -60, ""},
			{"0000000000002000 main.inner inl.go:10", 0, 90, "inline"},
			{"std::vector<int>::push_back(int const&)", 30, 30, "partial-inline"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseTop (-want +got):\n%s", diff)
	}

	for _, bad := range []string{
		"Showing nodes accounting for 1.5ms, 1% of 2ms total\n      flat  flat%   sum%        cum   cum%\n",
		"no report here\n",
	} {
		if _, err := parseTop(bad, outUnit{"ns", "ns"}); err == nil {
			t.Errorf("parseTop(%q) succeeded, want an error", bad)
		}
	}
}

func TestCompareTablesTies(t *testing.T) {
	// Two nodes printed alike with the same flat may come in either order; any other
	// reordering is a difference.
	a := &table{Rows: []row{{"pkg/s.go", 10, 20, ""}, {"pkg/s.go", 10, 30, ""}, {"main.go", 5, 5, ""}}}
	b := &table{Rows: []row{{"pkg/s.go", 10, 30, ""}, {"pkg/s.go", 10, 20, ""}, {"main.go", 5, 5, ""}}}
	if d := compareTables(a, b, false); d != "" {
		t.Errorf("tied rows compared by order:\n%s", d)
	}
	if d := compareTables(a, b, true); d == "" {
		t.Error("under -cum, rows with different cum must keep their order")
	}
	c := &table{Rows: []row{{"main.go", 5, 5, ""}, {"pkg/s.go", 10, 20, ""}, {"pkg/s.go", 10, 30, ""}}}
	if d := compareTables(a, c, false); d == "" {
		t.Error("reordering distinct names was not reported")
	}
}

// TestOverflowsColumns checks the test for a pprof top table with a value wider than its
// column, on pprof's own lines.
func TestOverflowsColumns(t *testing.T) {
	header := "Showing nodes accounting for 3.29MB, 99.14% of 3.32MB total\n      flat  flat%   sum%        cum   cum%\n"
	for _, c := range []struct {
		rows string
		want bool
	}{
		{"  2885.75kB 86.86% 86.86%  2885.75kB 86.86%  main.f\n    0.22kB  0.66% 99.14%   270.28kB  8.14%  main.g (inline)\n", false},
		{"  2885.75kB 86.86% 86.86%  2885.75kB 86.86%  main.f\n    0.22kB 0.0066% 99.14%   270.28kB  8.14%  main.g\n", true},
		{"         0     0% 99.14%  3279.91kB 8.4e-05%  main.h\n", true},
		{" 12345678.5MB 86.86% 86.86%  2885.75kB 86.86%  main.f\n", true},
		{"", false},
	} {
		if got := overflowsColumns(header + c.rows); got != c.want {
			t.Errorf("overflowsColumns(%q) = %v, want %v", c.rows, got, c.want)
		}
	}
}
