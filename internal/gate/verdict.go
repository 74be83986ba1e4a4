package gate

// The gate's verdict as reports hold it: the JSON contract of a diff's verdict
// (docs/json.md, "Verdict"), made by Analysis.Judge.

// Verdict is the outcome of the gate.
type Verdict struct {
	// Status is "pass" (every watched change beyond a rule's threshold is ruled out),
	// "regression" (a rule is broken) or "inconclusive" (neither: the captures cannot tell).
	// With no rules it is "pass".
	Status string `json:"status"`
	// Passed is true when Status is "pass", and only then.
	Passed bool `json:"passed"`
	// Rules are the rules that were checked, in command-line order; each marshals to its
	// canonical form.
	Rules []Rule `json:"rules"`
	// Method is how changes were judged: "exact" (the values carry no noise and are compared
	// as they are), "moderated-t" (a moderated t-test over the captures, on the log of each
	// value, with Holm's adjustment over all tests), or "none" (one capture per side of values
	// with sampling noise: nothing can be decided).
	Method string `json:"method"`
	// Watched lists the nodes some rule watched, in row order.
	Watched []string `json:"watched"`
	// Tests counts the tests the rules made: one per rule and watched node, one per total rule.
	Tests int `json:"tests"`
	// PassedTests counts the tests that ruled out a change beyond their threshold.
	PassedTests int `json:"passed_tests"`
	// Violations lists every broken rule and node, by rule order and then row order.
	Violations []Violation `json:"violations"`
	// Undecided lists the tests that neither passed nor broke their rule, by rule order and
	// then row order.
	Undecided []Undecided `json:"undecided"`
}

// Verdict statuses.
const (
	VerdictPass         = "pass"
	VerdictRegression   = "regression"
	VerdictInconclusive = "inconclusive"
)

// Verdict methods.
const (
	MethodExact      = "exact"
	MethodModeratedT = "moderated-t"
	MethodNone       = "none"
)

// Metrics a violation can be about.
const (
	MetricTotal = "total"
	MetricFlat  = "flat"
	MetricCum   = "cum"
)

// Violation is one rule broken by one node (or by the total).
type Violation struct {
	// Rule is the broken rule; it marshals to its canonical form.
	Rule Rule `json:"rule"`
	// Node is the node's name, or null for the total.
	Node *string `json:"node"`
	// Metric is "total", "flat" or "cum": the value the rule watched.
	Metric string `json:"metric"`
	// Change is the watched value's change; its fields are the violation's own in JSON.
	Change
	// Estimate is the change the rule measures, in its unit (percent for total, flat>N% and
	// cum>N%; percentage points for flat>Npp and cum>Npp; the node's share of the new total in
	// percent for new>N%), as the test estimated it; Low and High are its confidence bounds
	// (one-sided, 1-alpha each), all three equal for exact values. All three are null for a
	// total that grew from 0, which has no relative size.
	Estimate *float64 `json:"estimate"`
	Low      *float64 `json:"low"`
	High     *float64 `json:"high"`
	// Threshold is what Estimate had to exceed: the rule's threshold, or more where
	// --min-delta asks more of a small node, in the same unit.
	Threshold float64 `json:"threshold"`
	// Exact is true when the values carry no noise and were compared as they are.
	Exact bool `json:"exact"`
	// RunToRun is, for exact values, how much the watched value moved between runs of the
	// same code: the largest difference between two captures of one side, in the sample
	// unit (scaled as the values are compared). A change counts only beyond it; 0 with one
	// capture per side, for a value that repeats, and for values that are not exact.
	RunToRun int64 `json:"run_to_run"`
	// PValue is the Holm-adjusted one-sided p-value of the test that the value grew, or null
	// for exact values.
	PValue *float64 `json:"p_value"`
}

// Undecided is a test that neither passed nor broke its rule: the change may or may not
// exceed the threshold, and these captures cannot tell which.
type Undecided struct {
	// Rule is the rule; it marshals to its canonical form.
	Rule Rule `json:"rule"`
	// Node is the node's name, or null for the total.
	Node *string `json:"node"`
	// Metric is "total", "flat" or "cum".
	Metric string `json:"metric"`
	// Estimate, Low and High are as in a violation; null when the captures give no estimate
	// or no interval (one capture per side of values with sampling noise).
	Estimate *float64 `json:"estimate"`
	Low      *float64 `json:"low"`
	High     *float64 `json:"high"`
	// Threshold is as in a violation.
	Threshold float64 `json:"threshold"`
	// Detectable is, in the same unit, the smallest change these captures would have found
	// to break the rule; null when unknown.
	Detectable *float64 `json:"detectable"`
	// CapturesNeeded is roughly how many captures per side would decide the test if the
	// estimate and the variation stayed as they are; null when unknown or more than 1000.
	CapturesNeeded *int `json:"captures_needed"`
	// LengthFactor is roughly how many times longer each capture would have to be to decide
	// the test with as many captures; null when unknown, or when longer captures alone cannot
	// (the node's run-to-run variation is larger than what the decision needs).
	LengthFactor *float64 `json:"length_factor"`
	// Reason says in words why the test is undecided.
	Reason string `json:"reason"`
}

// Effect is a relative change estimated from the captures, with its confidence interval.
type Effect struct {
	// Pct is the estimated change in percent of the base: the ratio of the sides' geometric
	// means less 1, times 100. For exact values it is DeltaPct.
	Pct float64 `json:"pct"`
	// LowPct and HighPct bound the change: each is a one-sided bound of confidence 1-alpha,
	// so together they are an interval of confidence Confidence. Both equal Pct for exact
	// values.
	LowPct  float64 `json:"low_pct"`
	HighPct float64 `json:"high_pct"`
	// Confidence is 1-2·alpha, or 1 for exact values.
	Confidence float64 `json:"confidence"`
	// Exact is true when the values carry no noise and are compared as they are.
	Exact bool `json:"exact"`
}
