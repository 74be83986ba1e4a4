package gate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/profq/profq/internal/option"
)

// What each verdict counts as under each --inconclusive policy: only an inconclusive verdict
// is mapped.
func TestInconclusivePolicy(t *testing.T) {
	for _, tc := range []struct {
		policy                         string
		pass, regression, inconclusive Outcome
	}{
		{"exit4", Passed, Regressed, Undetermined},
		{"pass", Passed, Regressed, Passed},
		{"fail", Passed, Regressed, Regressed},
	} {
		p, err := ParseInconclusive(tc.policy)
		if err != nil {
			t.Fatal(err)
		}
		for status, want := range map[string]Outcome{VerdictPass: tc.pass, VerdictRegression: tc.regression, VerdictInconclusive: tc.inconclusive} {
			if got := p.Outcome(status); got != want {
				t.Errorf("%s: %s counts as %v, want %v", tc.policy, status, got, want)
			}
		}
	}
	_, err := ParseInconclusive("maybe")
	if !option.IsUsage(err) || err.Error() != `--inconclusive "maybe": want one of exit4, pass, fail` {
		t.Errorf("error %v", err)
	}
}

// A rule in a report marshals to its canonical form and reads back as the same rule.
func TestRuleJSON(t *testing.T) {
	r, err := Parse("cum > 10% :^main\\.")
	if err != nil {
		t.Fatal(err)
	}
	// As the renderers encode: without HTML escaping.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct{ Rules []Rule }{[]Rule{*r}}); err != nil {
		t.Fatal(err)
	}
	data := []byte(strings.TrimSpace(b.String()))
	if string(data) != `{"Rules":["cum>10%:^main\\."]}` {
		t.Errorf("JSON %s", data)
	}
	var back struct{ Rules []Rule }
	if err := json.Unmarshal(data, &back); err != nil || len(back.Rules) != 1 || back.Rules[0].String() != r.String() || !back.Rules[0].Covers("main.f") {
		t.Errorf("read back %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"Rules":["cum>"]}`), &back); err == nil {
		t.Error("a rule that does not parse was read")
	}
}
